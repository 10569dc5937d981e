package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.compaction.CompactionOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batches are atomic for concurrent readers: every batch writes the same counter into all 20 keys,
 * while flushes and compactions (on two threads) run underneath. Any read that sees two different
 * counters, or a counter going backwards, saw half a batch or an older state after a newer one.
 */
class ConcurrentReadersTest {
  private static final int KEYS = 20;
  private static final int BATCHES = 4000;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("key-%02d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static long counter(byte[] value) {
    String s = new String(value, StandardCharsets.UTF_8);
    return Long.parseLong(s.substring(0, s.indexOf('|')));
  }

  @Test
  void readersNeverSeeHalfABatch() throws Exception {
    CompactionOptions c = TestOptions.tiny().compaction();
    EngineOptions options =
        TestOptions.tiny()
            .withCompaction(
                new CompactionOptions(
                    c.level0FileNumCompactionTrigger(),
                    c.levelMultiplier(),
                    c.maxBytesForLevelBase(),
                    c.levelBaseFollowsFlushes(),
                    c.targetFileSizeBytes(),
                    c.numLevels(),
                    2,
                    c.score()));
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong reads = new AtomicLong();
    try (Engine e = Engine.open(dir, options)) {
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        int mode = t;
        Thread r =
            new Thread(
                () -> {
                  long lastSeen = -1;
                  while (!done.get() && failures.isEmpty()) {
                    long seen = -1;
                    List<Long> values = new ArrayList<>();
                    if (mode == 0) {
                      try (ScanIterator it = e.scan(ScanOptions.all())) {
                        while (it.next()) {
                          values.add(counter(it.value()));
                        }
                      }
                    } else if (mode == 1) {
                      try (ScanIterator it = e.scan(ScanOptions.all().reversed())) {
                        while (it.next()) {
                          values.add(counter(it.value()));
                        }
                      }
                    } else {
                      try (Snapshot s = e.snapshot()) {
                        for (int i = 0; i < KEYS; i++) {
                          byte[] v = s.get(key(i));
                          if (v != null) {
                            values.add(counter(v));
                          }
                        }
                      }
                    }
                    if (!values.isEmpty()) {
                      seen = values.get(0);
                      if (values.size() != KEYS
                          || values.stream()
                              .anyMatch(v -> v.longValue() != values.get(0).longValue())) {
                        failures.add("reader " + mode + " saw a partial batch: " + values);
                      }
                    }
                    if (seen < lastSeen) {
                      failures.add(
                          "reader " + mode + " went back from " + lastSeen + " to " + seen);
                    }
                    lastSeen = seen;
                    reads.incrementAndGet();
                  }
                });
        r.start();
        readers.add(r);
      }
      String padding = "p".repeat(200);
      for (int i = 0; i < BATCHES && failures.isEmpty(); i++) {
        WriteBatch b = new WriteBatch();
        for (int k = 0; k < KEYS; k++) {
          b.put(key(k), (i + "|" + padding).getBytes(StandardCharsets.UTF_8));
        }
        e.apply(b, i);
      }
      done.set(true);
      for (Thread r : readers) {
        r.join();
      }
      assertThat(failures).isEmpty();
      assertThat(reads.get()).isGreaterThan(100);
      EngineStats s = e.stats();
      assertThat(s.flushes()).as("flushes during the run").isGreaterThan(50);
      assertThat(s.compactions()).as("compactions during the run").isGreaterThan(5);
    }
  }
}
