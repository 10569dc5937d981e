package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.pressure.WritePressure;
import io.shale.engine.pressure.WritePressure.Cause;
import io.shale.engine.pressure.WritePressure.Condition;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.pressure.WriteThrottledException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each cause of write pressure delays, then refuses, writes; a refused batch has no effect. */
class WritePressureTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static EngineOptions with(WritePressureOptions w) {
    return TestOptions.tiny().withWritePressure(w);
  }

  private static void write(Engine e, long index, int bytes) {
    byte[] v = new byte[bytes];
    new java.util.Random(index).nextBytes(v); // incompressible: sizes on disk are what is written
    e.apply(new WriteBatch().put(b("key-" + index), v), index);
  }

  @Test
  void levelZeroFilesDelayThenStopWrites() throws IOException {
    long rate = 1 << 20; // delayed_write_rate: 1 MiB/s at the slowdown threshold
    var w =
        new WritePressureOptions(true, 3, 5, 1L << 40, 1L << 41, 4, Duration.ofMillis(20), rate);
    List<WritePressure> seen = new CopyOnWriteArrayList<>();
    try (Engine e = Engine.open(dir, with(w))) {
      e.addWritePressureListener(seen::add);
      e.pauseCompactions();
      long index = 0;
      for (int flush = 1; flush <= 4; flush++) {
        write(e, ++index, 100);
        e.flush();
      }
      // 4 files: between slowdown (3) and stop (5): delayed by 1 ms + 19 ms * (4 - 3) / 2.
      WritePressure p = e.writePressure();
      assertThat(p.condition()).isEqualTo(Condition.DELAYED);
      assertThat(p.cause()).isEqualTo(Cause.L0_FILES);
      assertThat(p.suggestedDelay().toNanos()).isEqualTo(1_000_000 + 19_000_000 / 2);
      // A write waits for its bytes at the delayed rate, scaled by how far past the slowdown
      // threshold the state is (10.5 of 20 ms): 1 MiB/s x (1 - 0.9 x 0.525).
      long before = e.stats().writeDelayNanos();
      byte[] v = new byte[5_000];
      WriteBatch batch = new WriteBatch().put(b("key-" + (index + 1)), v);
      long expected = (long) (batch.byteSize() * 1e9 / (rate * (1 - 0.9 * 0.525)));
      assertThat(expected).isBetween(8_000_000L, 10_000_000L);
      long t0 = System.nanoTime();
      e.apply(batch, ++index);
      assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(expected);
      assertThat(e.stats().writeDelayNanos() - before).isBetween(expected - 1, expected + 1);
      e.flush();

      WritePressure stopped = e.writePressure();
      assertThat(stopped.condition()).isEqualTo(Condition.STOPPED);
      long refusedIndex = ++index;
      assertThatThrownBy(() -> write(e, refusedIndex, 100))
          .isInstanceOfSatisfying(
              WriteThrottledException.class,
              t -> {
                assertThat(t.pressure().cause()).isEqualTo(Cause.L0_FILES);
                assertThat(t.pressure().measured()).isEqualTo(5);
                assertThat(t.pressure().threshold()).isEqualTo(5);
                assertThat(t.retryAfter()).isPositive();
              })
          .hasMessageContaining("L0_FILES")
          .hasMessageContaining("level0_stop_writes_trigger");
      // The refused batch had no effect.
      assertThat(e.get(b("key-" + refusedIndex))).isNull();
      assertThat(e.lastAppliedIndex()).isEqualTo(refusedIndex - 1);
      assertThat(e.stats().throttledWrites()).isEqualTo(1);

      e.resumeCompactions();
      e.awaitCompactions();
      assertThat(e.writePressure().condition()).isEqualTo(Condition.NORMAL);
      write(e, refusedIndex, 100); // the same index is accepted now
      assertThat(e.get(b("key-" + refusedIndex))).isNotNull();
    }
    assertThat(seen)
        .extracting(WritePressure::condition)
        .containsSubsequence(Condition.DELAYED, Condition.STOPPED, Condition.NORMAL);
  }

  @Test
  void pendingCompactionBytesDelayThenStopWrites() throws IOException {
    var w =
        new WritePressureOptions(
            true,
            100,
            200,
            1 << 20,
            2 << 20,
            4,
            Duration.ofMillis(5),
            WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE);
    try (Engine e = Engine.open(dir, with(w))) {
      e.pauseCompactions();
      long index = 0;
      while (e.writePressure().cause() != Cause.PENDING_COMPACTION_BYTES && index < 10_000) {
        write(e, ++index, 500);
        if (index % 50 == 0) {
          e.flush(); // keep sealed memtables from being the cause
        }
      }
      WritePressure p = e.writePressure();
      assertThat(p.condition()).isEqualTo(Condition.DELAYED);
      assertThat(e.stats().pendingCompactionBytes()).isGreaterThanOrEqualTo(1 << 20);
      while (e.writePressure().condition() != Condition.STOPPED && index < 20_000) {
        write(e, ++index, 500);
        if (index % 50 == 0) {
          e.flush();
        }
      }
      e.flush();
      long next = index + 1;
      assertThatThrownBy(() -> write(e, next, 500))
          .isInstanceOfSatisfying(
              WriteThrottledException.class,
              t -> {
                assertThat(t.pressure().cause()).isEqualTo(Cause.PENDING_COMPACTION_BYTES);
                assertThat(t.pressure().measured()).isGreaterThanOrEqualTo(2 << 20);
                assertThat(t.pressure().threshold()).isEqualTo(2 << 20);
              });
      assertThat(e.get(b("key-" + next))).isNull();
      e.resumeCompactions();
      e.awaitCompactions();
      assertThat(e.writePressure().condition()).isEqualTo(Condition.NORMAL);
    }
  }

  @Test
  void sealedMemtablesWaitingForFlushStopWrites() throws IOException {
    var w =
        new WritePressureOptions(
            true,
            100,
            200,
            1L << 40,
            1L << 41,
            3,
            Duration.ofMillis(5),
            WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE);
    try (Engine e = Engine.open(dir, with(w))) {
      e.pauseFlushes();
      long index = 0;
      try {
        while (e.writePressure().condition() != Condition.DELAYED && index < 10_000) {
          write(e, ++index, 1000);
        }
        assertThat(e.writePressure().cause()).isEqualTo(Cause.MEMTABLES);
        assertThat(e.writePressure().measured()).isEqualTo(2);
        while (e.writePressure().condition() != Condition.STOPPED && index < 10_000) {
          write(e, ++index, 1000);
        }
        long next = index + 1;
        assertThatThrownBy(() -> write(e, next, 1000))
            .isInstanceOfSatisfying(
                WriteThrottledException.class,
                t -> assertThat(t.pressure().cause()).isEqualTo(Cause.MEMTABLES));
        assertThat(e.stats().immutableMemtables()).isEqualTo(3);
      } finally {
        e.resumeFlushes();
      }
      e.flush();
      assertThat(e.writePressure().condition()).isEqualTo(Condition.NORMAL);
      assertThat(e.persistedAppliedIndex()).isEqualTo(index);
    }
  }

  @Test
  void disabledPressureNeverRefuses() throws IOException {
    var w =
        new WritePressureOptions(
            false,
            1,
            1,
            1 << 20,
            1 << 20,
            4,
            Duration.ofMillis(5),
            WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE);
    try (Engine e = Engine.open(dir, with(w))) {
      e.pauseCompactions();
      for (long i = 1; i <= 2000; i++) {
        write(e, i, 100);
      }
      e.flush();
      assertThat(e.writePressure().condition()).isEqualTo(Condition.STOPPED);
      write(e, 2001, 100);
      assertThat(e.stats().throttledWrites()).isZero();
    }
  }
}
