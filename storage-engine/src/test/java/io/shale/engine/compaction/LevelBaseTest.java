package io.shale.engine.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Level 1's target follows what level 0 holds at its trigger: the flush table size is averaged over
 * flushes only, and the target stays between the output file size and the configured base.
 */
class LevelBaseTest {
  private static final long MIB = 1 << 20;
  private static final CompactionOptions FOLLOWS =
      new CompactionOptions(4, 10, 16 * MIB, true, 4 * MIB, 7, 1, CompactionScore.SEED);
  private static final CompactionOptions FIXED =
      new CompactionOptions(4, 10, 16 * MIB, false, 4 * MIB, 7, 1, CompactionScore.SEED);

  private long nextNumber = 1;

  private FileMetadata table(String lo, String hi, long size) {
    TableProperties p =
        new TableProperties(
            1000,
            0,
            0,
            0,
            1,
            0,
            10,
            lo.getBytes(StandardCharsets.UTF_8),
            hi.getBytes(StandardCharsets.UTF_8),
            1,
            nextNumber,
            0,
            1);
    return new FileMetadata(nextNumber++, size, p);
  }

  private Version flush(Version v, long size) {
    return v.apply(
        VersionEdit.of(List.of(new VersionEdit.Added(0, table("a", "z", size))), List.of()));
  }

  @Test
  void beforeAnyFlushTheConfiguredBaseHolds() {
    Version v = Version.empty(7);
    assertThat(v.level0TableBytes()).isZero();
    assertThat(FOLLOWS.levelBaseBytes(v)).isEqualTo(16 * MIB);
    assertThat(FOLLOWS.targetBytes(v, 2)).isEqualTo(160 * MIB);
  }

  @Test
  void smallFlushTablesShrinkEveryLevelsTargetDownToTheFileSize() {
    Version v = Version.empty(7);
    for (int i = 0; i < 4; i++) {
      v = flush(v, MIB / 2);
    }
    assertThat(v.level0TableBytes()).isEqualTo(MIB / 2);
    // 4 x 0.5 MiB = 2 MiB, under the 4 MiB output file size: one file's worth.
    assertThat(FOLLOWS.levelBaseBytes(v)).isEqualTo(4 * MIB);
    assertThat(FOLLOWS.targetBytes(v, 3)).isEqualTo(400 * MIB);
    assertThat(FIXED.levelBaseBytes(v)).isEqualTo(16 * MIB);
  }

  @Test
  void midSizedFlushTablesSetLevelOneToLevelZeroAtItsTrigger() {
    Version v = Version.empty(7);
    for (int i = 0; i < 3; i++) {
      v = flush(v, 3 * MIB);
    }
    assertThat(FOLLOWS.levelBaseBytes(v)).isEqualTo(12 * MIB);
    for (int i = 0; i < 40; i++) {
      v = flush(v, 64 * MIB);
    }
    // Large flush tables: the configured base is the ceiling.
    assertThat(FOLLOWS.levelBaseBytes(v)).isEqualTo(16 * MIB);
  }

  @Test
  void aRewriteOfLevelZeroIsNotAFlush() {
    Version v = flush(Version.empty(7), 2 * MIB);
    FileMetadata old = v.files(0).get(0);
    // Rewritten in place (blob GC) or moved down (compaction): neither is a flush.
    for (int outputLevel : new int[] {0, 1}) {
      Version next =
          v.apply(
              VersionEdit.of(
                  List.of(new VersionEdit.Added(outputLevel, table("a", "z", 40 * MIB))),
                  List.of(new VersionEdit.Removed(0, old.number()))));
      assertThat(next.level0TableBytes()).isEqualTo(2 * MIB);
    }
  }

  @Test
  void levelOneOverItsFollowedTargetIsPickedForSizeButNotWithTheFixedOne() {
    Version v = Version.empty(7);
    for (int i = 0; i < 2; i++) {
      v = flush(v, MIB);
    }
    v =
        v.apply(
            VersionEdit.of(
                List.of(
                    new VersionEdit.Added(1, table("a", "f", 3 * MIB)),
                    new VersionEdit.Added(1, table("g", "p", 3 * MIB))),
                List.of()));
    // Level 1 holds 6 MiB: over the followed 4 MiB, under the fixed 16 MiB.
    assertThat(new CompactionPicker(FOLLOWS).sizePressure(v, 1)).isEqualTo(1.5);
    assertThat(new CompactionPicker(FOLLOWS).candidates(v, 0))
        .extracting(CompactionPicker.Candidate::level)
        .containsOnly(1);
    assertThat(new CompactionPicker(FIXED).candidates(v, 0)).isEmpty();
  }

  @Property
  void theTargetStaysBetweenTheFileSizeAndTheBase(
      @ForAll @Size(min = 1, max = 50) List<@LongRange(min = 1, max = 1L << 32) Long> flushes) {
    Version v = Version.empty(7);
    long min = Long.MAX_VALUE;
    long max = 0;
    for (long size : flushes) {
      v = flush(v, size);
      min = Math.min(min, size);
      max = Math.max(max, size);
    }
    assertThat(v.level0TableBytes()).isBetween(min, max);
    assertThat(FOLLOWS.levelBaseBytes(v)).isBetween(4 * MIB, 16 * MIB);
    assertThat(FOLLOWS.levelBaseBytes(v))
        .isEqualTo(Math.min(16 * MIB, Math.max(4 * MIB, 4 * v.level0TableBytes())));
  }
}
