package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.blob.BlobOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GC is not starved by ordinary compactions. The bound: when a blob file reaches the GC threshold,
 * the scheduler's next free slot goes to its GC, unless GC also took the previous slot and a
 * compaction is due, in which case one compaction goes first. So the wait is at most the remainder
 * of the running job plus one compaction, plus the GC of the older files over the threshold (they
 * go first, oldest first). Under a continuous overwrite load (flushes and compactions running all
 * the time, on two shared cores), every file seen over the threshold must be gone within 10
 * seconds; the longest wait measured is printed.
 */
class BlobGcUnderLoadIT {
  private static final long BOUND_MILLIS = 10_000;

  @TempDir Path dir;

  @Test
  void filesOverTheThresholdAreCollectedWithinTheBoundUnderLoad() throws Exception {
    EngineOptions options =
        TestOptions.tiny()
            .withMemtableSize(256 << 10)
            .withBlob(new BlobOptions(true, 4096, 0.5, 512 << 10, 64 << 10, false));
    Map<Long, Long> firstSeenOverThreshold = new HashMap<>();
    Map<Long, Long> waited = new HashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    try (Engine e = Engine.open(dir, options)) {
      Thread writer =
          new Thread(
              () -> {
                Random rnd = new Random(9);
                long index = 0;
                try {
                  while (!stop.get()) {
                    byte[] v = new byte[4096 + rnd.nextInt(16 << 10)];
                    rnd.nextBytes(v);
                    e.apply(
                        new WriteBatch()
                            .put(
                                String.format("key-%03d", rnd.nextInt(200))
                                    .getBytes(StandardCharsets.UTF_8),
                                v),
                        ++index);
                  }
                } catch (Throwable t) {
                  writerFailure.set(t);
                }
              });
      writer.start();
      long end = System.currentTimeMillis() + 15_000;
      while (System.currentTimeMillis() < end && writerFailure.get() == null) {
        long now = System.currentTimeMillis();
        Set<Long> present = new HashSet<>();
        for (EngineStats.BlobFileStats f : e.stats().blobFiles()) {
          present.add(f.number());
          if (f.garbageRatio() >= 0.5) {
            firstSeenOverThreshold.putIfAbsent(f.number(), now);
          }
        }
        for (var entry : firstSeenOverThreshold.entrySet()) {
          if (!present.contains(entry.getKey()) && !waited.containsKey(entry.getKey())) {
            waited.put(entry.getKey(), now - entry.getValue());
          }
        }
        for (var entry : firstSeenOverThreshold.entrySet()) {
          if (!waited.containsKey(entry.getKey())) {
            assertThat(now - entry.getValue())
                .as("blob file %d over the threshold for", entry.getKey())
                .isLessThan(BOUND_MILLIS);
          }
        }
        Thread.sleep(5);
      }
      stop.set(true);
      writer.join();
      assertThat(writerFailure.get()).isNull();
      EngineStats s = e.stats();
      System.out.printf(
          "blob files collected under load: %d, longest wait %d ms, GC runs %d, "
              + "compactions %d%n",
          waited.size(),
          waited.values().stream().mapToLong(Long::longValue).max().orElse(0),
          s.blobGcRuns(),
          s.compactions());
      assertThat(waited).hasSizeGreaterThan(5);
      assertThat(waited.values()).allMatch(w -> w < BOUND_MILLIS);
      assertThat(s.compactions()).as("ordinary compactions ran alongside").isGreaterThan(5);
    }
  }
}
