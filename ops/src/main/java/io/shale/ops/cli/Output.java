package io.shale.ops.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a command's result goes, as a table for people or JSON for programs ({@code --output
 * table|json}). Tables are left-aligned columns under an upper-case header.
 */
final class Output {
  enum Format {
    TABLE,
    JSON
  }

  private final Format format;
  private final PrintWriter out;

  Output(Format format, PrintWriter out) {
    this.format = format;
    this.out = out;
  }

  boolean json() {
    return format == Format.JSON;
  }

  void json(Object value) {
    out.println(Json.write(value));
    out.flush();
  }

  void line(String s) {
    out.println(s);
    out.flush();
  }

  void table(List<String> header, List<List<String>> rows) {
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    int[] width = new int[header.size()];
    for (List<String> r : all) {
      for (int i = 0; i < r.size(); i++) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    for (List<String> r : all) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.size(); i++) {
        line.append(r.get(i));
        if (i < r.size() - 1) {
          line.append(" ".repeat(width[i] - r.get(i).length() + 2));
        }
      }
      out.println(line.toString().stripTrailing());
    }
    out.flush();
  }

  /** 1536 -> "1.5 KiB". */
  /** A key as text: UTF-8, quoted, control characters shown as '?'. */
  static String printable(byte[] key) {
    return "\""
        + new String(key, java.nio.charset.StandardCharsets.UTF_8).replaceAll("\\p{Cntrl}", "?")
        + "\"";
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
