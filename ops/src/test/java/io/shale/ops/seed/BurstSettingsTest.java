package io.shale.ops.seed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BurstSettingsTest {
  @Test
  void windowsOpenAtTheStartOfEachPeriodForTheirLength() {
    BurstSettings b = new BurstSettings(60, 20, 0);
    assertThat(b.inWindow(0)).isTrue();
    assertThat(b.inWindow(19_999)).isTrue();
    assertThat(b.inWindow(20_000)).isFalse();
    assertThat(b.inWindow(59_999)).isFalse();
    assertThat(b.inWindow(60_000)).isTrue();
    assertThat(b.nextWindowStart(25_000)).isEqualTo(60_000);
    assertThat(b.nextWindowStart(61_000)).isEqualTo(61_000);
    assertThat(BurstSettings.NONE.inWindow(0)).isFalse();
  }

  @Test
  void theChildProcessGetsTheSameSettings() {
    BurstSettings b = new BurstSettings(30, 5, 64L << 20);
    assertThat(BurstSettings.ofArgument(b.argument())).isEqualTo(b);
    assertThat(BurstSettings.ofArgument(BurstSettings.NONE.argument()))
        .isEqualTo(BurstSettings.NONE);
    assertThat(b.describe()).isEqualTo("a burst writer for 5 s of every 30 s at 64MiB/s");
    assertThat(BurstSettings.DEFAULT.describe())
        .isEqualTo("a burst writer for 20 s of every 60 s at full speed");
  }

  @Test
  void aBurstLongerThanItsPeriodIsRefused() {
    assertThatThrownBy(() -> new BurstSettings(10, 11, 0))
        .hasMessageContaining("--burst-length must be 1 to --burst-period (10)");
  }
}
