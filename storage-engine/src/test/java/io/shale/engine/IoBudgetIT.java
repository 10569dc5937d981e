package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.pressure.IoBudgetOptions;
import io.shale.engine.pressure.WritePressureOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compaction I/O budget: with N MiB/s and low pressure, compaction writes at N (within 10%)
 * over a 20-second window; near the slowdown trigger the limit relaxes and the rate rises.
 */
class IoBudgetIT {
  private static final long MIB = 1 << 20;
  private static final long RATE = 4 * MIB;

  @TempDir Path dir;

  private static EngineOptions options(int slowdown) {
    return TestOptions.tiny()
        .withMemtableSize(4 * MIB)
        .withCompaction(
            new CompactionOptions(4, 10, 256 * MIB, true, 64 * MIB, 5, 1, CompactionScore.SEED))
        .withWritePressure(
            new WritePressureOptions(
                true,
                slowdown,
                1000,
                1L << 40,
                1L << 41,
                8,
                Duration.ofMillis(1),
                WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE))
        .withBudget(new IoBudgetOptions(RATE, List.of()));
  }

  /** 30 level-0 files of ~4 MiB, written with compactions paused. */
  private static void preload(Engine e) {
    e.pauseCompactions();
    Random rnd = new Random(3);
    long index = 0;
    for (int file = 0; file < 30; file++) {
      for (int i = 0; i < 40; i++) {
        byte[] v = new byte[100 << 10];
        rnd.nextBytes(v);
        e.applyCommitted(
            new WriteBatch()
                .put(String.format("key-%02d-%03d", file, i).getBytes(StandardCharsets.UTF_8), v),
            ++index);
      }
      e.flush();
    }
  }

  /**
   * Background bytes written per second over the window, as the budget counts them while they are
   * written (no writes arrive meanwhile, so there are no flushes: it is all compaction).
   */
  private static double writeRate(Engine e, long seconds) throws InterruptedException {
    long before = e.backgroundBytesWritten();
    long t0 = System.nanoTime();
    Thread.sleep(seconds * 1000);
    long after = e.backgroundBytesWritten();
    assertThat(e.stats().compactions()).as("the compaction ran through the whole window").isZero();
    assertThat(e.stats().compactionsInProgress()).isEqualTo(1);
    return (after - before) / ((System.nanoTime() - t0) / 1e9);
  }

  @Test
  void compactionWritesAtTheBudgetAndFasterNearTheSlowdownTrigger() throws Exception {
    EngineOptions low = options(1000).withBlob(io.shale.engine.blob.BlobOptions.disabled());
    try (Engine e = Engine.open(dir.resolve("low"), low)) {
      preload(e);
      e.resumeCompactions();
      Thread.sleep(1000); // let the level-0 compaction get going
      double rate = writeRate(e, 20);
      System.out.printf(
          "budget %d MiB/s, low pressure: compaction wrote %.2f MiB/s%n", RATE / MIB, rate / MIB);
      assertThat(rate).isBetween(RATE * 0.9, RATE * 1.1);
    }
    // 30 level-0 files against a slowdown trigger of 32: 94% of the way, the limit is ~8x.
    EngineOptions near = options(32).withBlob(io.shale.engine.blob.BlobOptions.disabled());
    try (Engine e = Engine.open(dir.resolve("near"), near)) {
      preload(e);
      e.resumeCompactions();
      Thread.sleep(300);
      double rate = writeRate(e, 2);
      System.out.printf(
          "budget %d MiB/s, 30 of 32 level-0 files: compaction wrote %.2f MiB/s%n",
          RATE / MIB, rate / MIB);
      assertThat(rate).isGreaterThan(RATE * 2.0);
    }
  }
}
