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
 * reads each node's {@code /metrics} for its old generation's use (live and not yet collected) and
 * the budget the node computed at start ({@code shale_heap_budget_bytes}, the sum of every bounded
 * structure); every {@link #LIVE_EVERY_SECONDS} seconds, and at the end, it takes each node's live
 * heap from a class histogram ({@code jcmd GC.class_histogram}, after a full collection). The live
 * heap is what is held against the budget: the old generation also holds garbage that G1 collects
 * only when it needs the room.
 */
final class HeapWatch {
  private final ShaleTarget cluster;
  private final long[] peakLive = new long[3];
  private final long[] peakOld = new long[3];
  private final long[] histogramTotal = new long[3];
  private final long[] budget = new long[3];
  private static final int LIVE_EVERY_SECONDS = 20;
  private final long[] peakHistogram = new long[3];
  private int samples;
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
    if (++samples % LIVE_EVERY_SECONDS == 0) {
      try {
        histograms(false);
      } catch (IOException e) {
        // a node is down: allAlive reports it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
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
    List<String> heads = histograms(true);
    for (int i = 0; i < 3; i++) {
      System.out.printf(
          "n%d %s: live %,d MiB (histogram; peak %,d MiB), peak live after GC %,d MiB,"
              + " peak old gen %,d MiB, budget %,d MiB%n%s%n",
          i + 1,
          when,
          histogramTotal[i] >> 20,
          peakHistogram[i] >> 20,
          peakLive[i] >> 20,
          peakOld[i] >> 20,
          budget[i] >> 20,
          heads.get(i));
    }
  }

  /** Takes every node's class histogram; returns their heads when {@code keepHeads}. */
  private synchronized List<String> histograms(boolean keepHeads)
      throws IOException, InterruptedException {
    List<String> heads = new ArrayList<>();
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
      peakHistogram[i] = Math.max(peakHistogram[i], histogramTotal[i]);
      if (keepHeads) {
        head.addAll(lines.subList(0, Math.min(14, lines.size())));
      }
      heads.add(String.join("\n", head));
    }
    return heads;
  }

  /** Every node's live heap stayed within its budget, by the samples and the last histogram. */
  synchronized void assertWithinBudgets() {
    for (int i = 0; i < 3; i++) {
      assertThat(budget[i]).as("n%d exports shale_heap_budget_bytes", i + 1).isPositive();
      assertThat(peakHistogram[i])
          .as("n%d's live heap (class histograms during and after the load)", i + 1)
          .isLessThanOrEqualTo(budget[i]);
    }
  }
}
