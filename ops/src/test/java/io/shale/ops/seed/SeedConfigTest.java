package io.shale.ops.seed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.EngineOptions;
import org.junit.jupiter.api.Test;

class SeedConfigTest {
  @Test
  void aShaleConfigChangesOnlyTheKeysItNamesOfAfter() {
    EngineOptions seed = SeedConfig.AFTER.shaleOptions(BenchScale.FULL);
    EngineOptions changed =
        SeedConfig.AFTER.shaleOptions(
            BenchScale.FULL, "[lsm]\nadvise_random_reads = true\nmax_open_files = 5000\n");
    assertThat(changed.adviseRandomReads()).isTrue();
    assertThat(changed.maxOpenFiles()).isEqualTo(5000);
    assertThat(changed.memtableSizeBytes()).isEqualTo(BenchScale.FULL.memtableBytes());
    assertThat(changed.blob()).isEqualTo(seed.blob());
    assertThat(changed.compaction()).isEqualTo(seed.compaction());
    assertThat(SeedConfig.AFTER.shaleOptions(BenchScale.FULL, null)).isEqualTo(seed);
  }

  @Test
  void beforeKeepsTheSeedsSettings() {
    assertThat(SeedConfig.BEFORE.shaleOptions(BenchScale.FULL, "[lsm]\nmax_open_files = 5000\n"))
        .isEqualTo(SeedConfig.BEFORE.shaleOptions(BenchScale.FULL));
  }

  @Test
  void aMistypedKeyIsNamed() {
    assertThatThrownBy(
            () -> SeedConfig.AFTER.shaleOptions(BenchScale.FULL, "[lsm]\nadvise_random = true\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("advise_random");
  }
}
