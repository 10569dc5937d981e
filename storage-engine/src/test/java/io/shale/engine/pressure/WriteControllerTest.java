package io.shale.engine.pressure;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.pressure.WritePressure.Cause;
import io.shale.engine.pressure.WritePressure.Condition;
import org.junit.jupiter.api.Test;

/**
 * The delay grows linearly between the thresholds: no cliff, worst cause wins; while delayed,
 * writes share a byte rate, so a write waits in proportion to its bytes, never longer than
 * max_delay.
 */
class WriteControllerTest {
  private final WriteController c = new WriteController(WritePressureOptions.DEFAULT);

  @Test
  void levelZeroDelayIsLinearBetweenSlowdownAndStop() {
    assertThat(c.compute(19, 0, 0).condition()).isEqualTo(Condition.NORMAL);
    long previous = 0;
    for (int files = 20; files < 36; files++) {
      WritePressure p = c.compute(files, 0, 0);
      assertThat(p.condition()).isEqualTo(Condition.DELAYED);
      assertThat(p.cause()).isEqualTo(Cause.L0_FILES);
      long expected = 1_000_000 + 99_000_000L * (files - 20) / 16;
      assertThat(p.suggestedDelay().toNanos()).isBetween(expected - 1, expected + 1);
      // Each added file adds the same ~6 ms: no step is larger than one sixteenth of the range.
      assertThat(p.suggestedDelay().toNanos() - previous)
          .isLessThanOrEqualTo(99_000_000 / 16 + 1_000_001);
      previous = p.suggestedDelay().toNanos();
    }
    WritePressure stop = c.compute(36, 0, 0);
    assertThat(stop.condition()).isEqualTo(Condition.STOPPED);
    assertThat(stop.threshold()).isEqualTo(36);
  }

  @Test
  void pendingBytesUseTheSoftAndHardLimits() {
    long soft = 64L << 30;
    long hard = 256L << 30;
    assertThat(c.compute(0, soft - 1, 0).condition()).isEqualTo(Condition.NORMAL);
    WritePressure half = c.compute(0, soft + (hard - soft) / 2, 0);
    assertThat(half.cause()).isEqualTo(Cause.PENDING_COMPACTION_BYTES);
    assertThat(half.suggestedDelay().toMillis()).isEqualTo(50);
    assertThat(c.compute(0, hard, 0).condition()).isEqualTo(Condition.STOPPED);
  }

  @Test
  void theWorstCauseWins() {
    WritePressure p = c.compute(30, 64L << 30, 4);
    assertThat(p.condition()).isEqualTo(Condition.STOPPED);
    assertThat(p.cause()).isEqualTo(Cause.MEMTABLES);
    WritePressure delayed = c.compute(34, 64L << 30, 0);
    assertThat(delayed.cause()).isEqualTo(Cause.L0_FILES);
  }

  @Test
  void whileDelayedAWriteWaitsForItsBytesAtTheDelayedRate() {
    WritePressure atSlowdown = c.compute(20, 0, 0);
    long now = 1_000_000_000L;
    // 16 MiB/s (scaled by 0.99 at the slowdown threshold): 16 KiB takes about a millisecond.
    long small = c.delayFor(16 << 10, atSlowdown, now);
    assertThat(small).isBetween(980_000L, 1_000_000L);
    // A later write waits for the backlog too; a write after the backlog drained does not.
    long next = c.delayFor(16 << 10, atSlowdown, now);
    assertThat(next).isBetween(2 * 980_000L, 2 * 1_000_000L);
    assertThat(c.delayFor(16 << 10, atSlowdown, now + 10_000_000L)).isEqualTo(small);
  }

  @Test
  void nearTheStopThresholdTheRateFallsToATenthAndNoWriteWaitsMoreThanMaxDelay() {
    WritePressure nearStop = c.compute(35, 0, 0);
    long now = 5_000_000_000L;
    // Severity 0.94: the rate is 16 MiB/s x (1 - 0.9 x 0.94), about 2.5 MiB/s.
    long d = c.delayFor(64 << 10, nearStop, now);
    assertThat(d).isBetween(23_000_000L, 27_000_000L);
    long later = now + 1_000_000_000L;
    // A burst of 1 MiB writes: the backlog, and so every delay, stops at max_delay (100 ms).
    for (int i = 0; i < 5; i++) {
      assertThat(c.delayFor(1 << 20, nearStop, later)).isLessThanOrEqualTo(100_000_000L);
    }
    assertThat(c.delayFor(1, nearStop, later)).isEqualTo(100_000_000L);
  }
}
