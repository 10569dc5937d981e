package io.shale.engine.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One compaction job, inputs to outputs: the newest version of each key wins, tombstones are
 * dropped only where no deeper level can hold their key, outputs are cut at the target size, and a
 * lone file with nothing to merge moves without being rewritten.
 */
class CompactionJobTest {
  private static final TableWriteOptions TABLES = new TableWriteOptions(1024, 16, Compression.LZ4);

  @TempDir Path dir;
  private final AtomicLong numbers = new AtomicLong();
  private TableCache cache;

  @AfterEach
  void closeCache() {
    if (cache != null) {
      cache.close();
    }
  }

  private TableCache cache() {
    if (cache == null) {
      cache = new TableCache(100, new BlockCache(1 << 20), n -> FileNames.table(dir, n), false);
    }
    return cache;
  }

  private TableOutput output(int level, long targetFileSize) {
    return new TableOutput(
        numbers::incrementAndGet,
        n -> FileNames.table(dir, n),
        TABLES,
        level,
        10,
        targetFileSize,
        n -> {});
  }

  /** A table at {@code level} from entries "key@seq=value" (value "-" for a tombstone). */
  private FileMetadata table(int level, String... entries) throws IOException {
    return table(level, 10, entries);
  }

  /** As {@link #table}, with no filter. */
  private FileMetadata unfilteredTable(int level, String... entries) throws IOException {
    return table(level, 0, entries);
  }

  private FileMetadata table(int level, int bloomBitsPerKey, String... entries) throws IOException {
    Memtable m = new Memtable(0);
    for (String e : entries) {
      String key = e.substring(0, e.indexOf('@'));
      long seq = Long.parseLong(e.substring(e.indexOf('@') + 1, e.indexOf('=')));
      String v = e.substring(e.indexOf('=') + 1);
      if (v.equals("-")) {
        m.add(key.getBytes(UTF_8), seq, ValueKind.TOMBSTONE, new byte[0]);
      } else {
        m.add(key.getBytes(UTF_8), seq, ValueKind.VALUE, v.getBytes(UTF_8));
      }
    }
    try (InternalIterator it = m.iterator(Direction.FORWARD)) {
      TableOutput out =
          new TableOutput(
              numbers::incrementAndGet,
              n -> FileNames.table(dir, n),
              TABLES,
              level,
              bloomBitsPerKey,
              Long.MAX_VALUE,
              n -> {});
      List<FileMetadata> files = out.write(it, k -> false, null, () -> false).files();
      assertThat(files).hasSize(1);
      return files.get(0);
    }
  }

  private static Version version(List<List<FileMetadata>> levels) {
    List<VersionEdit.Added> added = new ArrayList<>();
    for (int l = 0; l < levels.size(); l++) {
      for (FileMetadata f : levels.get(l)) {
        added.add(new VersionEdit.Added(l, f));
      }
    }
    return Version.empty(4).apply(VersionEdit.of(added, List.of()));
  }

  private List<String> contents(List<FileMetadata> files) throws IOException {
    List<String> out = new ArrayList<>();
    for (FileMetadata f : files) {
      TableReader r = cache().acquire(f.number());
      try (InternalIterator it = r.iterator(Direction.FORWARD)) {
        for (it.seekToFirst(); it.valid(); it.next()) {
          out.add(
              new String(it.userKey(), UTF_8)
                  + "@"
                  + it.sequence()
                  + "="
                  + (it.kind() == ValueKind.TOMBSTONE ? "-" : new String(it.value(), UTF_8)));
        }
      } finally {
        r.release();
      }
    }
    return out;
  }

  @Test
  void theNewestVersionWinsAndTombstonesAreDroppedAtTheBottom() throws IOException {
    FileMetadata l0 = table(0, "a@9=a9", "b@8=-", "d@7=d7");
    FileMetadata l1 = table(1, "a@1=a1", "b@2=b2", "c@3=c3", "d@4=d4");
    Version v = version(List.of(List.of(l0), List.of(l1)));
    Compaction c = new Compaction(0, 1, List.of(l0), List.of(l1), 1.0, CompactionReason.SIZE);
    CompactionJob.Outcome o =
        new CompactionJob(c, v, cache(), output(1, Long.MAX_VALUE), () -> false, n -> {}, null)
            .run();
    assertThat(o.trivialMove()).isFalse();
    assertThat(contents(o.outputs())).containsExactly("a@9=a9", "c@3=c3", "d@7=d7");
    assertThat(o.entriesIn()).isEqualTo(7);
    assertThat(o.entriesDropped()).isEqualTo(4); // a@1, b@8 (tombstone), b@2, d@4
    assertThat(o.edit().removed())
        .containsExactlyInAnyOrder(
            new VersionEdit.Removed(0, l0.number()), new VersionEdit.Removed(1, l1.number()));
    assertThat(o.edit().added()).extracting(VersionEdit.Added::level).containsOnly(1);
  }

  @Test
  void aTombstoneIsKeptWhileADeeperLevelHoldsItsKey() throws IOException {
    FileMetadata l0 = table(0, "b@8=-");
    FileMetadata l1 = table(1, "b@2=b2");
    FileMetadata l2 = table(2, "a@1=a1", "b@1=b1", "c@1=c1");
    assertThat(compactLevel0(l0, l1, l2)).containsExactly("b@8=-");
  }

  @Test
  void aTombstoneIsDroppedWhenTheFilterOfEveryDeeperTableInRangeRulesItsKeyOut()
      throws IOException {
    // Level 2's range holds b, but its filter says b is absent: the tombstone hides b@2 only.
    FileMetadata l0 = table(0, "b@8=-", "d@9=-");
    FileMetadata l1 = table(1, "b@2=b2");
    FileMetadata l2 = table(2, "a@1=a1", "c@1=c1", "e@1=e1");
    assertThat(compactLevel0(l0, l1, l2)).isEmpty();
  }

  @Test
  void aTombstoneIsKeptWhenADeeperTableInRangeHasNoFilter() throws IOException {
    FileMetadata l0 = table(0, "b@8=-");
    FileMetadata l1 = table(1, "b@2=b2");
    FileMetadata l2 = unfilteredTable(2, "a@1=a1", "c@1=c1");
    assertThat(compactLevel0(l0, l1, l2)).containsExactly("b@8=-");
  }

  /** The output of compacting {@code l0} into {@code l1} over {@code l2}. */
  private List<String> compactLevel0(FileMetadata l0, FileMetadata l1, FileMetadata l2)
      throws IOException {
    Version v = version(List.of(List.of(l0), List.of(l1), List.of(l2)));
    Compaction c = new Compaction(0, 1, List.of(l0), List.of(l1), 1.0, CompactionReason.SIZE);
    CompactionJob.Outcome o =
        new CompactionJob(c, v, cache(), output(1, Long.MAX_VALUE), () -> false, n -> {}, null)
            .run();
    return contents(o.outputs());
  }

  @Test
  void outputsAreCutAtTheTargetSizeAndDoNotOverlap() throws IOException {
    List<String> entries = new ArrayList<>();
    java.util.Random rnd = new java.util.Random(1);
    for (int i = 0; i < 2000; i++) {
      StringBuilder value = new StringBuilder();
      for (int j = 0; j < 100; j++) {
        value.append((char) ('a' + rnd.nextInt(26))); // little for LZ4 to compress
      }
      entries.add(String.format("key%05d@%d=%s", i, i + 1, value));
    }
    FileMetadata l0 = table(0, entries.toArray(String[]::new));
    Version v = version(List.of(List.of(l0), List.of()));
    Compaction c = new Compaction(0, 1, List.of(l0), List.of(), 1.0, CompactionReason.SIZE);
    CompactionJob.Outcome o =
        new CompactionJob(c, v, cache(), output(1, 32 << 10), () -> false, n -> {}, null).run();
    assertThat(o.outputs()).hasSizeGreaterThan(3);
    for (int i = 1; i < o.outputs().size(); i++) {
      assertThat(
              Keys.compare(o.outputs().get(i - 1).largestKey(), o.outputs().get(i).smallestKey()))
          .isNegative();
    }
    assertThat(contents(o.outputs())).hasSize(2000);
  }

  @Test
  void aLoneFileWithNothingToMergeMovesWithoutBeingRewritten() throws IOException {
    FileMetadata l1 = table(1, "a@1=a1", "b@2=b2");
    FileMetadata l2 = table(2, "x@1=x1");
    Version v = version(List.of(List.of(), List.of(l1), List.of(l2)));
    Compaction c = new Compaction(1, 2, List.of(l1), List.of(), 1.0, CompactionReason.SIZE);
    long before = numbers.get();
    CompactionJob.Outcome o =
        new CompactionJob(c, v, cache(), output(2, Long.MAX_VALUE), () -> false, n -> {}, null)
            .run();
    assertThat(o.trivialMove()).isTrue();
    assertThat(o.outputs()).containsExactly(l1);
    assertThat(numbers.get()).isEqualTo(before); // no file written
    assertThat(o.edit().added()).containsExactly(new VersionEdit.Added(2, l1));
  }
}
