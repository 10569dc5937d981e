package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Watches the heap of a {@link ShaleTarget}'s three node JVMs while a load runs: every second it
 * reads each node's {@code /metrics} for its live heap after the last collection that reached the
 * old generation ({@code jvm_gc_live_data_size_bytes}), its old generation's use, and the
 * old-generation budget the node computed at start ({@code shale_heap_budget_bytes}, the sum of
 * every bounded structure). At the end it forces a full collection with {@code jcmd
 * GC.class_histogram} and takes the total of live objects too.
 */
final class HeapWatch {
  private final ShaleTarget cluster;
  private final long[] peakLive = new long[3];
  private final long[] peakOld = new long[3];
  private final long[] histogramTotal = new long[3];
  private final long[] budget = new long[3];
  private ScheduledExecutorService sampler;

  HeapWatch(ShaleTarget cluster) {
    this.cluster = cluster;
  }

  void start() {
    sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleWithFixedDelay(this::sample, 0, 1, TimeUnit.SECONDS);
  }

  void stop() throws InterruptedException {
    sampler.shutdownNow();
    sampler.awaitTermination(30, TimeUnit.SECONDS);
    sample();
  }

  private synchronized void sample() {
    for (int i = 0; i < 3; i++) {
      Map<String, Double> m = meters(i);
      peakLive[i] = Math.max(peakLive[i], m.getOrDefault("live", 0.0).longValue());
      peakOld[i] = Math.max(peakOld[i], m.getOrDefault("old", 0.0).longValue());
      budget[i] = m.getOrDefault("budget", 0.0).longValue();
    }
  }

  /** The three figures of node {@code i}'s /metrics page this watch reads (empty if it is down). */
  private Map<String, Double> meters(int i) {
    Map<String, Double> out = new java.util.HashMap<>();
    try {
      for (String line : cluster.metrics(i).split("\n")) {
        if (line.startsWith("jvm_gc_live_data_size_bytes")) {
          out.put("live", value(line));
        } else if (line.startsWith("jvm_memory_used_bytes") && line.contains("Old Gen")) {
          out.put("old", value(line));
        } else if (line.startsWith("shale_heap_budget_bytes") && line.contains("part=\"total\"")) {
          out.put("budget", value(line));
        }
      }
    } catch (IOException | RuntimeException e) {
      // the node is down: allAlive reports it
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return out;
  }

  private static double value(String line) {
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }

  /**
   * Prints each node's class histogram head (after a full collection) and keeps its total of live
   * bytes.
   */
  void printHistograms(String when) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    for (int i = 0; i < 3; i++) {
      Process p =
          new ProcessBuilder(
                  jcmd.toString(), Long.toString(cluster.process(i).pid()), "GC.class_histogram")
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(60, TimeUnit.SECONDS);
      List<String> lines = out.lines().toList();
      List<String> head = new ArrayList<>();
      for (String line : lines) {
        if (line.startsWith("Total")) {
          String[] f = line.trim().split("\\s+");
          histogramTotal[i] = Long.parseLong(f[2]);
        }
      }
      head.addAll(lines.subList(0, Math.min(14, lines.size())));
      System.out.printf(
          "n%d %s: live %,d MiB (histogram), peak live after GC %,d MiB, peak old gen %,d MiB,"
              + " budget %,d MiB%n%s%n",
          i + 1,
          when,
          histogramTotal[i] >> 20,
          peakLive[i] >> 20,
          peakOld[i] >> 20,
          budget[i] >> 20,
          String.join("\n", head));
    }
  }

  /** Every node's live heap stayed within its budget, by the samples and the last histogram. */
  synchronized void assertWithinBudgets() {
    for (int i = 0; i < 3; i++) {
      assertThat(budget[i]).as("n%d exports shale_heap_budget_bytes", i + 1).isPositive();
      assertThat(peakLive[i])
          .as("n%d's peak live heap after a collection", i + 1)
          .isLessThanOrEqualTo(budget[i]);
      assertThat(histogramTotal[i])
          .as("n%d's live objects in the last class histogram", i + 1)
          .isLessThanOrEqualTo(budget[i]);
    }
  }
}
