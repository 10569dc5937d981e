package io.shale.engine.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pending-bytes estimate against a case computed by hand. */
class PendingCompactionBytesTest {
  private static final long MIB = 1 << 20;
  private static final CompactionOptions FIXED_BASE =
      new CompactionOptions(4, 10, 256 * MIB, false, 64 * MIB, 7, 1, CompactionScore.SEED);

  private static FileMetadata file(long n, String lo, String hi, long size) {
    return new FileMetadata(
        n,
        size,
        new TableProperties(
            1,
            0,
            0,
            0,
            1,
            0,
            10,
            lo.getBytes(StandardCharsets.UTF_8),
            hi.getBytes(StandardCharsets.UTF_8),
            1,
            1,
            0,
            0));
  }

  @Test
  void handComputedCase() {
    // L0: 4 files of 10 MiB (trigger 4). L1: 300 MiB (target 256). L2: 1 GiB (target 2.5 GiB).
    List<VersionEdit.Added> added = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      added.add(new VersionEdit.Added(0, file(10 + i, "a", "z", 10 * MIB)));
    }
    added.add(new VersionEdit.Added(1, file(1, "a", "m", 150 * MIB)));
    added.add(new VersionEdit.Added(1, file(2, "n", "z", 150 * MIB)));
    added.add(new VersionEdit.Added(2, file(3, "a", "z", 1024 * MIB)));
    Version v = Version.empty(7).apply(VersionEdit.of(added, List.of()));

    // By hand:
    //   L0 over its trigger: all of L0 (40) plus all of L1 (300)            = 340 MiB; 40 moves
    // down
    //   L1: 300 + 40 = 340 > 256: excess 84, times (1 + 1024 / 340)          = 336.988... MiB
    //   L2: 1024 + 84 = 1108 < 2560: nothing
    double expectedMib = 340 + 84 * (1 + 1024.0 / 340);
    long estimate = PendingCompactionBytes.estimate(v, FIXED_BASE);
    assertThat((double) estimate / MIB)
        .isCloseTo(expectedMib, org.assertj.core.data.Offset.offset(0.001));

    // With level 1's target following the 10 MiB flush tables: 4 x 10 = 40 MiB, under the 64 MiB
    // file size, so L1's target is 64 MiB and L2's 640 MiB.
    //   L0 as above                                                          = 340 MiB
    //   L1: 340 > 64: excess 276, times (1 + 1024 / 340)
    //   L2: 1024 + 276 = 1300 > 640: excess 660, times (1 + 0 / 1300)        = 660 MiB
    double followedMib = 340 + 276 * (1 + 1024.0 / 340) + 660;
    assertThat((double) PendingCompactionBytes.estimate(v, CompactionOptions.DEFAULT) / MIB)
        .isCloseTo(followedMib, org.assertj.core.data.Offset.offset(0.001));

    // Under every target and trigger there is nothing to do.
    Version calm = Version.empty(7).apply(VersionEdit.of(added.subList(4, 5), List.of()));
    assertThat(PendingCompactionBytes.estimate(calm, FIXED_BASE)).isZero();
  }
}
