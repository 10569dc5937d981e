package io.shale.engine.pressure;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.pressure.WritePressure.Cause;
import io.shale.engine.pressure.WritePressure.Condition;
import org.junit.jupiter.api.Test;

/** The delay grows linearly between the thresholds: no cliff, worst cause wins. */
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
}
