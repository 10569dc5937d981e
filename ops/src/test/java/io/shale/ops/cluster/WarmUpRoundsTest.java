package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WarmUpRoundsTest {
  @Test
  void goesOnWhileRatesClimbAndStopsAfterTwoSettledRounds() {
    WarmUpRounds r = new WarmUpRounds(60, 300, 0.10);
    assertThat(r.record(600, 40)).isFalse();
    assertThat(r.record(1_300, 80)).isFalse(); // +117%
    assertThat(r.record(2_300, 120)).isFalse(); // +77%
    assertThat(r.record(2_400, 160)).isFalse(); // +4%, but the change before was not settled
    assertThat(r.isSettled()).isFalse();
    assertThat(r.record(2_300, 200)).isTrue(); // -4% after +4%
    assertThat(r.summary())
        .isEqualTo("5 rounds in 200 s, the last settled (-4.2% on the one before)");
  }

  @Test
  void aSettledPairBeforeTheLeastWarmUpDoesNotStopIt() {
    WarmUpRounds r = new WarmUpRounds(120, 300, 0.10);
    r.record(1_000, 30);
    r.record(1_010, 60);
    assertThat(r.record(1_020, 90)).isFalse();
    assertThat(r.isSettled()).isTrue();
    assertThat(r.record(1_000, 120)).isTrue();
  }

  @Test
  void stopsAtTheMostWarmUpEvenWhileStillChanging() {
    WarmUpRounds r = new WarmUpRounds(60, 100, 0.10);
    assertThat(r.record(1_000, 50)).isFalse();
    assertThat(r.record(2_000, 100)).isTrue();
    assertThat(r.summary())
        .isEqualTo("2 rounds in 100 s, the last still changing (+100.0% on the one before)");
  }

  @Test
  void oneRoundIsEnoughWhenItFillsTheWarmUp() {
    WarmUpRounds r = new WarmUpRounds(5, 5, 0.10);
    assertThat(r.record(140, 14)).isTrue();
    assertThat(r.isSettled()).isFalse();
    assertThat(r.summary()).isEqualTo("1 round in 14 s");
  }
}
