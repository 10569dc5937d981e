package io.shale.ops.cluster;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Where a put's time goes, from the nodes' own meters scraped before and after a cell: the leader's
 * gRPC server time for Put, the wait for a group-commit slot and the writes per log entry (both as
 * differences over the cell), and Ratis's stage timers (means over its recent samples: the Raft
 * write from submission to reply, the log worker's queue, write and fsync, and a follower's
 * handling of an append with its fsync).
 */
final class PutBreakdown {
  /** One stage: what it is, where it is measured, its mean in ms (or a count). */
  record Stage(String stage, String where, double value, String unit) {}

  private PutBreakdown() {}

  /** Prometheus text to name{labels} -> value. */
  static Map<String, Double> parse(String text) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      if (space <= 0) {
        continue;
      }
      try {
        out.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
      } catch (NumberFormatException ignored) {
        // not a sample line
      }
    }
    return out;
  }

  private static double sum(Map<String, Double> m, Predicate<String> name) {
    return m.entrySet().stream()
        .filter(e -> name.test(e.getKey()))
        .mapToDouble(Map.Entry::getValue)
        .filter(v -> !Double.isNaN(v))
        .sum();
  }

  private static double mean(Map<String, Double> m, Predicate<String> name) {
    double[] values =
        m.entrySet().stream()
            .filter(e -> name.test(e.getKey()))
            .mapToDouble(Map.Entry::getValue)
            .filter(v -> !Double.isNaN(v) && v > 0)
            .toArray();
    double s = 0;
    for (double v : values) {
      s += v;
    }
    return values.length == 0 ? Double.NaN : s / values.length;
  }

  /** Δsum / Δcount of a Micrometer timer or summary named {@code base} matching {@code labels}. */
  private static double meanOver(
      Map<String, Double> before, Map<String, Double> after, String base, String labels) {
    Predicate<String> sums = n -> n.startsWith(base + "_sum") && n.contains(labels);
    Predicate<String> counts = n -> n.startsWith(base + "_count") && n.contains(labels);
    double count = sum(after, counts) - sum(before, counts);
    return count <= 0 ? Double.NaN : (sum(after, sums) - sum(before, sums)) / count;
  }

  static List<Stage> stages(
      Map<String, Double> leaderBefore,
      Map<String, Double> leaderAfter,
      Map<String, Double> follower) {
    List<Stage> out = new ArrayList<>();
    out.add(
        new Stage(
            "API call, receipt to reply (gRPC server, Put)",
            "leader",
            1e3 * meanOver(leaderBefore, leaderAfter, "shale_grpc_server_requests_seconds", "Put"),
            "ms"));
    out.add(
        new Stage(
            "waiting for a free group-commit slot",
            "leader",
            1e3 * meanOver(leaderBefore, leaderAfter, "shale_group_commit_queued_seconds", ""),
            "ms"));
    out.add(
        new Stage(
            "writes per log entry",
            "leader",
            meanOver(leaderBefore, leaderAfter, "shale_group_commit_writes", ""),
            "writes"));
    out.add(
        new Stage(
            "Raft write: submitted to applied and answered",
            "leader",
            1e3 * mean(leaderAfter, n -> n.contains("clientWriteRequest_mean")),
            "ms"));
    out.add(
        new Stage(
            "log worker queue",
            "leader",
            1e3 * mean(leaderAfter, n -> n.contains("queueingDelay_mean")),
            "ms"));
    out.add(
        new Stage(
            "log flush: write and fsync",
            "leader",
            1e3 * mean(leaderAfter, n -> n.contains("flushTime_mean")),
            "ms"));
    out.add(
        new Stage(
            "log fsync",
            "leader",
            1e3 * mean(leaderAfter, n -> n.contains("syncTime_mean")),
            "ms"));
    out.add(
        new Stage(
            "handling an append",
            "follower",
            1e3 * mean(follower, n -> n.contains("follower_append_entry_latency_mean")),
            "ms"));
    out.add(
        new Stage(
            "log fsync", "follower", 1e3 * mean(follower, n -> n.contains("syncTime_mean")), "ms"));
    return out;
  }

  static String format(Stage s) {
    return Double.isNaN(s.value())
        ? "-"
        : String.format(Locale.ROOT, s.unit().equals("ms") ? "%.2f" : "%.1f", s.value());
  }
}
