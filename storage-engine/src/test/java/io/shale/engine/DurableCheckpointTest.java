package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A checkpoint of what is durable never waits for a flush and holds exactly the flushed state; a
 * requested flush seals the memtable without waiting, and not while an earlier sealed memtable is
 * still waiting for its own flush.
 */
class DurableCheckpointTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Polls until {@code index} reaches {@code want}, or fails after ten seconds. */
  private static void awaitIndex(LongSupplier index, long want) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (index.getAsLong() < want) {
      assertThat(System.nanoTime()).as("index reached " + want).isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS) // a call that waited for the paused flush hangs
  void holdsOnlyWhatIsFlushedAndNeverWaitsForAFlush() throws Exception {
    Path engineDir = dir.resolve("engine");
    try (Engine e = Engine.open(engineDir, TestOptions.tiny())) {
      e.apply(new WriteBatch().put(b("flushed"), b("1")), 1);
      e.flush();
      e.apply(new WriteBatch().put(b("in-memory"), b("2")), 2);
      e.pauseFlushes();
      try {
        CheckpointInfo before = e.checkpointOfDurable(dir.resolve("before"));
        assertThat(before.appliedIndex()).isEqualTo(1);
        e.requestFlush(); // seals index 2; the flush is paused, and the call does not wait for it
        e.apply(new WriteBatch().put(b("later"), b("3")), 3);
        e.requestFlush(); // the sealed memtable still waits: index 3 is not sealed behind it
        assertThat(e.stats().immutableMemtables()).isEqualTo(1);
        assertThat(e.persistedAppliedIndex()).isEqualTo(1);
      } finally {
        e.resumeFlushes();
      }
      awaitIndex(e::persistedAppliedIndex, 2);
      CheckpointInfo after = e.checkpointOfDurable(dir.resolve("after"));
      assertThat(after.appliedIndex()).isEqualTo(2);
      assertThat(e.persistedAppliedIndex()).as("index 3 stays in memory").isEqualTo(2);
    }
    try (Engine c = Engine.open(dir.resolve("before"), TestOptions.tiny())) {
      assertThat(c.persistedAppliedIndex()).isEqualTo(1);
      assertThat(c.get(b("flushed"))).isEqualTo(b("1"));
      assertThat(c.get(b("in-memory"))).isNull();
    }
    try (Engine c = Engine.open(dir.resolve("after"), TestOptions.tiny())) {
      assertThat(c.persistedAppliedIndex()).isEqualTo(2);
      assertThat(c.get(b("in-memory"))).isEqualTo(b("2"));
      assertThat(c.get(b("later"))).isNull();
    }
  }
}
