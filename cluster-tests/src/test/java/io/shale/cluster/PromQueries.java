package io.shale.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every PromQL expression Shale ships: each Grafana panel target of ops/grafana/dashboards and each
 * alert rule of ops/prometheus/alerts.yml, the latter with its top-level comparison made a {@code
 * bool} one, so that a healthy cluster (where no alert fires) still answers with the series the
 * alert watches.
 */
final class PromQueries {
  private static final Pattern EXPR =
      Pattern.compile("\"expr\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

  private PromQueries() {}

  /** Name (dashboard panel title or alert name) -> expression to evaluate. */
  static Map<String, String> all(Path root) throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    try (var dashboards = Files.list(root.resolve("ops/grafana/dashboards"))) {
      for (Path d : (Iterable<Path>) dashboards.sorted()::iterator) {
        Matcher m = EXPR.matcher(Files.readString(d));
        int i = 0;
        while (m.find()) {
          out.put(
              d.getFileName() + " target " + (++i),
              m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
      }
    }
    String alert = null;
    List<String> lines = Files.readAllLines(root.resolve("ops/prometheus/alerts.yml"));
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.startsWith("- alert:")) {
        alert = line.substring("- alert:".length()).strip();
      } else if (line.startsWith("expr:") && alert != null) {
        String expr = line.substring("expr:".length()).strip();
        if (expr.equals("|")) {
          StringBuilder b = new StringBuilder();
          int indent = lines.get(i).indexOf("expr:");
          while (i + 1 < lines.size()
              && (lines.get(i + 1).isBlank()
                  || lines.get(i + 1).length() - lines.get(i + 1).stripLeading().length()
                      > indent)) {
            b.append(lines.get(++i).strip()).append(' ');
          }
          expr = b.toString().strip();
        }
        out.put("alert " + alert, asBool(expr));
      }
    }
    return out;
  }

  /** {@code a > 4} as {@code a > bool 4}: the first comparison outside braces, quotes, parens. */
  static String asBool(String expr) {
    int depth = 0;
    boolean quoted = false;
    for (int i = 0; i < expr.length(); i++) {
      char c = expr.charAt(i);
      if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && (c == '{' || c == '(' || c == '[')) {
        depth++;
      } else if (!quoted && (c == '}' || c == ')' || c == ']')) {
        depth--;
      } else if (!quoted && depth == 0 && (c == '>' || c == '<' || c == '=' || c == '!')) {
        int end = i + 1;
        if (end < expr.length() && expr.charAt(end) == '=') {
          end++;
        }
        if (c == '=' && end == i + 1) {
          continue; // a lone '=' is no comparison
        }
        return expr.substring(0, end) + " bool" + expr.substring(end);
      }
    }
    return expr;
  }
}
