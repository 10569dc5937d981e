package io.shale.engine.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The picker orders candidates by the seed's score and respects eligibility and busy files. */
class CompactionPickerTest {
  private static final long NOW = 1_000L * 86_400_000L;
  private static final long MIB = 1 << 20;
  private static final CompactionOptions OPTIONS =
      new CompactionOptions(4, 10, 10 * MIB, false, MIB, 7, 1, CompactionScore.SEED);

  private static FileMetadata file(
      long number, String lo, String hi, long size, double tombstones, double ageDays) {
    long entries = 1000;
    TableProperties p =
        new TableProperties(
            entries,
            (long) (entries * tombstones),
            0,
            0,
            1,
            0,
            10,
            lo.getBytes(StandardCharsets.UTF_8),
            hi.getBytes(StandardCharsets.UTF_8),
            1,
            1,
            NOW - (long) (ageDays * 86_400_000L),
            1);
    return new FileMetadata(number, size, p);
  }

  private static Version version(int level, FileMetadata... files) {
    List<VersionEdit.Added> added = new ArrayList<>();
    for (FileMetadata f : files) {
      added.add(new VersionEdit.Added(level, f));
    }
    return Version.empty(7).apply(VersionEdit.of(added, List.of()));
  }

  @Test
  void scoreIsTheSeedFormula() {
    CompactionScore s = CompactionScore.SEED;
    assertThat(s.score(1.5, 0.4, 0)).isCloseTo(1.5 * (1 + 3 * 0.4), within(1e-9));
    assertThat(s.score(2.0, 0.0, 1.0)).isCloseTo(2.0 * 1.5, within(1e-9));
    // Both factors saturate: tombstone ratio at 1, age at 2 days.
    assertThat(s.score(1.0, 5.0, 30.0)).isCloseTo(4.0 * 2.0, within(1e-9));
  }

  @Test
  void tombstoneDenseFileGoesFirstThenTheOldOne() {
    // Level 1 holds 15 MiB against a 10 MiB target: pressure 1.5 for every file.
    Version v =
        version(
            1,
            file(1, "a", "b", 5 * MIB, 0.0, 0.0),
            file(2, "c", "d", 5 * MIB, 0.0, 2.0),
            file(3, "e", "f", 5 * MIB, 0.4, 0.0));
    List<CompactionPicker.Candidate> c = new CompactionPicker(OPTIONS).candidates(v, NOW);
    assertThat(c).extracting(x -> x.file().number()).containsExactly(3L, 2L, 1L);
    assertThat(c.get(0).score()).isCloseTo(1.5 * 2.2, within(1e-6));
    assertThat(c.get(1).score()).isCloseTo(1.5 * 2.0, within(1e-6));
    Compaction picked = new CompactionPicker(OPTIONS).pick(v, Set.of(), List.of(), NOW);
    assertThat(picked.inputs()).extracting(FileMetadata::number).containsExactly(3L);
    assertThat(picked.outputLevel()).isEqualTo(2);
    assertThat(picked.reason()).isEqualTo(CompactionReason.SIZE);
  }

  @Test
  void withoutTheTombstoneAndAgeFactorsOnlySizeCounts() {
    Version v =
        version(1, file(1, "a", "b", 5 * MIB, 0.0, 0.0), file(3, "e", "f", 5 * MIB, 0.9, 2.0));
    CompactionPicker sizeOnly = new CompactionPicker(OPTIONS.withScore(CompactionScore.SIZE_ONLY));
    assertThat(sizeOnly.candidates(v, NOW))
        .extracting(CompactionPicker.Candidate::score)
        .containsExactly(1.0, 1.0);
  }

  @Test
  void underTargetLevelIsCompactedOnlyForTombstonesNotForAge() {
    // 5 MiB of a 10 MiB target: pressure 0.5.
    Version v =
        version(
            1,
            file(1, "a", "b", 2 * MIB, 0.5, 0.0), // 0.5 * 2.5 = 1.25: eligible
            file(2, "c", "d", 2 * MIB, 0.0, 2.0), // age alone: not eligible
            file(3, "e", "f", MIB, 0.1, 0.0)); // 0.5 * 1.3 = 0.65: not eligible
    List<CompactionPicker.Candidate> c = new CompactionPicker(OPTIONS).candidates(v, NOW);
    assertThat(c).extracting(x -> x.file().number()).containsExactly(1L);
    assertThat(c.get(0).reason()).isEqualTo(CompactionReason.TOMBSTONES);
  }

  @Test
  void aTombstoneDenseFileOfAnUnderTargetLevelWaitsIfItsCompactionWouldRewriteTooMuch() {
    // Level 1 at 0.5 of its target; file 1 (1 MiB, 50% tombstones) would be eligible, but it
    // overlaps 11 MiB of level 2 (more than 10x its size), file 2 only 10 MiB.
    List<VersionEdit.Added> added = new ArrayList<>();
    added.add(new VersionEdit.Added(1, file(1, "a", "f", MIB, 0.5, 0)));
    added.add(new VersionEdit.Added(1, file(2, "g", "m", MIB, 0.5, 0)));
    added.add(new VersionEdit.Added(1, file(3, "n", "z", 3 * MIB, 0.0, 0)));
    for (int i = 0; i < 11; i++) {
      added.add(
          new VersionEdit.Added(
              2, file(10 + i, "b" + (char) ('a' + i), "b" + (char) ('a' + i), MIB, 0, 0)));
    }
    for (int i = 0; i < 10; i++) {
      added.add(
          new VersionEdit.Added(
              2, file(30 + i, "h" + (char) ('a' + i), "h" + (char) ('a' + i), MIB, 0, 0)));
    }
    Version v = Version.empty(7).apply(VersionEdit.of(added, List.of()));
    List<CompactionPicker.Candidate> c = new CompactionPicker(OPTIONS).candidates(v, NOW);
    assertThat(c).extracting(x -> x.file().number()).containsExactly(2L);
    assertThat(c.get(0).reason()).isEqualTo(CompactionReason.TOMBSTONES);
    // With keys of its range in level 3, compacting it into level 2 would drop no tombstone.
    List<VersionEdit.Added> deeper = new ArrayList<>(added);
    deeper.add(new VersionEdit.Added(3, file(50, "k", "k", MIB, 0, 0)));
    Version v3 = Version.empty(7).apply(VersionEdit.of(deeper, List.of()));
    assertThat(new CompactionPicker(OPTIONS).candidates(v3, NOW)).isEmpty();
    // Over target, size makes every file eligible whatever its overlap.
    added.add(new VersionEdit.Added(1, file(4, "za", "zz", 6 * MIB, 0.0, 0)));
    Version full = Version.empty(7).apply(VersionEdit.of(added, List.of()));
    assertThat(new CompactionPicker(OPTIONS).candidates(full, NOW))
        .extracting(x -> x.file().number())
        .contains(1L, 2L, 3L, 4L);
  }

  private static Version levelOneOverLevelTwo(long tombstoneFileOverlap) {
    // Level 1 over target (15 MiB of 10: pressure 1.5). File 1: 1 MiB, 40% tombstones (factor
    // 2.2). File 2: 13 MiB overlapping nothing (1 byte written per byte moved, the cheapest).
    // File 3: 1 MiB overlapping 10 MiB (11 bytes written per byte moved).
    List<VersionEdit.Added> added = new ArrayList<>();
    added.add(new VersionEdit.Added(1, file(1, "a", "f", MIB, 0.4, 0)));
    added.add(new VersionEdit.Added(1, file(2, "g", "m", 13 * MIB, 0.0, 0)));
    added.add(new VersionEdit.Added(1, file(3, "n", "z", MIB, 0.0, 0)));
    added.add(new VersionEdit.Added(2, file(10, "b", "e", tombstoneFileOverlap, 0, 0)));
    added.add(new VersionEdit.Added(2, file(11, "o", "p", 10 * MIB, 0, 0)));
    return Version.empty(7).apply(VersionEdit.of(added, List.of()));
  }

  @Test
  void withinALevelScoresAreScaledByCostAgainstTheCheapestFile() {
    Version v = levelOneOverLevelTwo(MIB);
    assertThat(CompactionPicker.overlapBytes(v.files(1), v.files(2)))
        .containsExactly(MIB, 0, 10 * MIB);
    List<CompactionPicker.Candidate> c = new CompactionPicker(OPTIONS).candidates(v, NOW);
    // Tombstones (x2.2) outweigh costing twice the cheapest: 1.5 * 2.2 / 2 = 1.65.
    assertThat(c).extracting(x -> x.file().number()).containsExactly(1L, 2L, 3L);
    assertThat(c.get(0).score()).isCloseTo(1.65, within(1e-6));
    assertThat(c.get(1).score()).isCloseTo(1.5, within(1e-6));
    assertThat(c.get(2).score()).isCloseTo(1.5 / 11, within(1e-6));
    // At four times the cheapest's cost they do not: 1.5 * 2.2 / 4 = 0.825.
    Version dear = levelOneOverLevelTwo(3 * MIB);
    assertThat(new CompactionPicker(OPTIONS).candidates(dear, NOW))
        .extracting(x -> x.file().number())
        .containsExactly(2L, 1L, 3L);
  }

  @Test
  void levelZeroCompactsAllItsFilesWithTheOverlappingLevelOneFiles() {
    List<VersionEdit.Added> added = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      added.add(new VersionEdit.Added(0, file(10 + i, "b", "m", MIB, 0, 0)));
    }
    added.add(new VersionEdit.Added(1, file(1, "a", "c", MIB, 0, 0)));
    added.add(new VersionEdit.Added(1, file(2, "n", "z", MIB, 0, 0)));
    Version v = Version.empty(7).apply(VersionEdit.of(added, List.of()));
    Compaction c = new CompactionPicker(OPTIONS).pick(v, Set.of(), List.of(), NOW);
    assertThat(c.level()).isZero();
    assertThat(c.inputs()).hasSize(4);
    assertThat(c.outputLevelInputs()).extracting(FileMetadata::number).containsExactly(1L);
    // Three files are under the trigger: nothing to do, even when they are all tombstones.
    Version three = Version.empty(7).apply(VersionEdit.of(added.subList(0, 3), List.of()));
    assertThat(new CompactionPicker(OPTIONS).pick(three, Set.of(), List.of(), NOW)).isNull();
    List<VersionEdit.Added> deletes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      deletes.add(new VersionEdit.Added(0, file(20 + i, "b", "m", MIB, 1.0, 0)));
    }
    Version tombstones = Version.empty(7).apply(VersionEdit.of(deletes, List.of()));
    assertThat(new CompactionPicker(OPTIONS).pick(tombstones, Set.of(), List.of(), NOW)).isNull();
  }

  @Test
  void busyFilesAndOverlappingRunningOutputsAreSkipped() {
    Version v =
        version(
            1,
            file(1, "a", "b", 5 * MIB, 0.0, 0.0),
            file(3, "e", "f", 5 * MIB, 0.4, 0.0),
            file(4, "g", "h", 5 * MIB, 0.2, 0.0));
    CompactionPicker p = new CompactionPicker(OPTIONS);
    assertThat(p.pick(v, Set.of(3L), List.of(), NOW).inputs().get(0).number()).isEqualTo(4L);
    Compaction running = p.pick(v, Set.of(), List.of(), NOW);
    Compaction next = p.pick(v, Set.of(3L), List.of(running), NOW);
    assertThat(next.inputs().get(0).number()).isEqualTo(4L);
  }
}
