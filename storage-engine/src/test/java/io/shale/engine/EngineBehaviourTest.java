package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.FileReads;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Contracts of the public API that the model-based test does not pin down on its own. */
class EngineBehaviourTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void fill(Engine e, long firstIndex, int keys, int valueSize, long seed) {
    Random r = new Random(seed);
    for (int i = 0; i < keys; i++) {
      byte[] v = new byte[valueSize];
      r.nextBytes(v);
      e.apply(
          new WriteBatch().put(b(String.format("key-%07d", r.nextInt(keys * 2))), v),
          firstIndex + i);
    }
  }

  @Test
  void oversizedKeysAndValuesAreRejectedNamingTheLimit() {
    WriteBatch batch = new WriteBatch();
    assertThatThrownBy(() -> batch.put(new byte[64 * 1024 + 1], new byte[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65536 bytes");
    assertThatThrownBy(() -> batch.delete(new byte[64 * 1024 + 1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 KiB");
    assertThatThrownBy(() -> batch.put(b("k"), new byte[64 * 1024 * 1024 + 1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 MiB");
    assertThatThrownBy(() -> batch.put(null, new byte[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    batch.put(new byte[64 * 1024], new byte[10]); // exactly at the limit is fine
    assertThat(batch.size()).isEqualTo(1);
  }

  @Test
  void indicesMustIncreaseAndAreRememberedAcrossReopen() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      assertThat(e.persistedAppliedIndex()).isEqualTo(-1);
      e.apply(new WriteBatch().put(b("a"), b("1")), 5);
      assertThatThrownBy(() -> e.apply(new WriteBatch().put(b("a"), b("2")), 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("index 5 does not increase");
      assertThat(e.get(b("a"))).isEqualTo(b("1"));
      e.apply(new WriteBatch(), 9); // an empty batch still advances the index (a Raft no-op)
      assertThat(e.flush()).isEqualTo(9);
    }
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      assertThat(e.persistedAppliedIndex()).isEqualTo(9);
      assertThatThrownBy(() -> e.apply(new WriteBatch(), 9))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void aManifestLeftByACrashBeforeCurrentSwitchedDoesNotBlockTheNextOpen() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      e.apply(new WriteBatch().put(b("k"), b("v")), 1);
    }
    // A crash between creating MANIFEST-n and pointing CURRENT at it leaves MANIFEST-n behind,
    // with n the next file number the old manifest recorded. Leave one at every free number.
    String current = io.shale.engine.version.VersionSet.currentManifestName(dir);
    for (int n = 1; n < 500; n++) {
      Path stale = dir.resolve(io.shale.engine.version.FileNames.manifestName(n));
      if (!java.nio.file.Files.exists(stale)) {
        java.nio.file.Files.write(stale, new byte[] {1, 2, 3});
      }
    }
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      assertThat(e.get(b("k"))).isEqualTo(b("v"));
      assertThat(io.shale.engine.version.VersionSet.currentManifestName(dir)).isNotEqualTo(current);
    }
    try (var files = java.nio.file.Files.list(dir)) {
      assertThat(files.filter(p -> p.getFileName().toString().startsWith("MANIFEST-")).count())
          .isEqualTo(1);
    }
  }

  @Test
  void readsThroughASnapshotLeftOpenFailAfterClose() throws IOException {
    Engine e = Engine.open(dir, TestOptions.tiny());
    e.apply(new WriteBatch().put(b("k"), b("v")), 1);
    Snapshot s = e.snapshot();
    e.close();
    assertThatThrownBy(() -> s.get(b("k")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> s.scan(ScanOptions.all())).isInstanceOf(IllegalStateException.class);
    s.close();
  }

  @Test
  void aSecondEngineCannotOpenTheSameDirectory() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      assertThatThrownBy(() -> Engine.open(dir, TestOptions.tiny()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("in use");
    }
  }

  @Test
  void laterOperationOnTheSameKeyInABatchWins() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      e.apply(new WriteBatch().put(b("k"), b("1")).delete(b("k")), 1);
      assertThat(e.get(b("k"))).isNull();
      e.apply(new WriteBatch().delete(b("k")).put(b("k"), b("2")), 2);
      assertThat(e.get(b("k"))).isEqualTo(b("2"));
      e.flush();
      assertThat(e.get(b("k"))).isEqualTo(b("2"));
    }
  }

  @Test
  void tombstonesAreDroppedAtTheBottomLevel() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      for (int i = 0; i < 2000; i++) {
        e.apply(new WriteBatch().put(b(String.format("k%05d", i)), new byte[100]), i);
      }
      e.compactRange();
      assertThat(e.stats().totalFiles()).isPositive();
      for (int i = 0; i < 2000; i++) {
        e.apply(new WriteBatch().delete(b(String.format("k%05d", i))), 2000 + i);
      }
      e.flush();
      assertThat(e.stats().levels().stream().mapToLong(EngineStats.LevelStats::tombstones).sum())
          .isPositive();
      e.compactRange();
      EngineStats s = e.stats();
      assertThat(s.levels().stream().mapToLong(EngineStats.LevelStats::entries).sum()).isZero();
      assertThat(s.totalFiles()).isZero();
      try (ScanIterator it = e.scan(ScanOptions.all())) {
        assertThat(it.next()).isFalse();
      }
    }
  }

  @Test
  void compactionKeepsLevelZeroSmallAndSplitsOutputAtTheTargetSize() throws IOException {
    EngineOptions o = TestOptions.tiny();
    try (Engine e = Engine.open(dir, o)) {
      fill(e, 0, 20_000, 100, 1);
      e.flush();
      e.awaitCompactions();
      EngineStats s = e.stats();
      assertThat(s.levels().get(0).files())
          .isLessThan(o.compaction().level0FileNumCompactionTrigger());
      assertThat(s.compactions()).isPositive();
      assertThat(s.compactionBytesWritten()).isPositive();
      int deeperFiles = 0;
      for (int l = 1; l < s.levels().size(); l++) {
        EngineStats.LevelStats ls = s.levels().get(l);
        deeperFiles += ls.files();
        if (ls.files() > 0) {
          // Cut at the first key boundary past the target: at most one block over.
          assertThat(ls.bytes() / ls.files())
              .isLessThanOrEqualTo(
                  o.compaction().targetFileSizeBytes() + 2 * o.table().blockSize());
        }
      }
      assertThat(deeperFiles).isGreaterThan(5);
    }
  }

  @Test
  void bloomBitsFollowTheLevelTheTableIsWrittenTo() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny().withMemtableSize(4 << 20))) {
      fill(e, 0, 30_000, 20, 2);
      e.flush();
      EngineStats.LevelStats l0 = e.stats().levels().get(0);
      assertThat(bitsPerKey(l0)).isBetween(15.9, 16.3);
      e.compactRange();
      EngineStats.LevelStats l1 = e.stats().levels().get(1);
      assertThat(l1.entries()).isPositive();
      assertThat(bitsPerKey(l1)).isBetween(13.9, 14.3);
    }
  }

  @Test
  void tableReaderMemoryCountsTheFiltersAndIndexesOfTheOpenTables() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny().withMemtableSize(4 << 20))) {
      assertThat(e.stats().tableReaderMemoryBytes()).isZero();
      fill(e, 0, 30_000, 20, 2);
      e.flush();
      assertThat(e.get(b("key-00300005"))).isNull(); // inside every table's range: opens each one
      EngineStats s = e.stats();
      long filters = s.levels().stream().mapToLong(EngineStats.LevelStats::bloomBytes).sum();
      long dataBlocks = 30_000L * 30 / TestOptions.tiny().table().blockSize();
      // Filters, plus an index entry (a key and a handle, at least 4 bytes) per data block.
      assertThat(s.tableReaderMemoryBytes())
          .isGreaterThan(filters + 4 * dataBlocks / 2)
          .isLessThan(filters + 64 * dataBlocks);
    }
  }

  @Test
  void fileReadsAreCountedByWhyTheyHappened() throws IOException {
    // No block cache, so that every block a read needs comes from its file.
    try (Engine e = Engine.open(dir, TestOptions.tiny().withBlockCache(0))) {
      for (int i = 0; i < 400; i++) {
        byte[] v = new byte[i % 4 == 0 ? 2000 : 100]; // every fourth value goes to a blob file
        java.util.Arrays.fill(v, (byte) i);
        e.apply(new WriteBatch().put(b(String.format("key-%04d", i)), v), i + 1);
      }
      e.flush();
      e.awaitCompactions();
      FileReads.Totals start = e.stats().fileReads();

      assertThat(e.get(b("key-0008"))).hasSize(2000);
      FileReads.Totals afterGet = e.stats().fileReads();
      assertThat(afterGet.blobPointReads() - start.blobPointReads()).isEqualTo(2000);
      assertThat(afterGet.tablePointReads() - start.tablePointReads()).isPositive();
      assertThat(afterGet.scans()).isEqualTo(start.scans());
      assertThat(afterGet.compactions()).isEqualTo(start.compactions());

      long valueBytes = 0;
      try (ScanIterator it = e.scan(new ScanOptions(b("key-0100"), null, 40, false, false))) {
        while (it.next()) {
          valueBytes += it.value().length;
        }
      }
      FileReads.Totals afterScan = e.stats().fileReads();
      assertThat(valueBytes).isEqualTo(10 * 2000 + 30 * 100);
      // The ten separated values, at least, and their pointers' blocks.
      assertThat(afterScan.blobScans() - afterGet.blobScans()).isGreaterThanOrEqualTo(10 * 2000);
      assertThat(afterScan.tableScans() - afterGet.tableScans()).isPositive();
      assertThat(afterScan.pointReads()).isEqualTo(afterGet.pointReads());

      // Overwrites of the same keys in a new table: compacting merges it with the old ones.
      for (int i = 0; i < 400; i++) {
        e.apply(new WriteBatch().put(b(String.format("key-%04d", i)), new byte[50]), 1000 + i);
      }
      e.compactRange(null, null);
      FileReads.Totals afterCompaction = e.stats().fileReads();
      assertThat(afterCompaction.tableCompactions() - afterScan.tableCompactions()).isPositive();
      assertThat(afterCompaction.pointReads()).isEqualTo(afterScan.pointReads());
      assertThat(afterCompaction.scans()).isEqualTo(afterScan.scans());
    }
  }

  @Test
  void compactionsCloseTheDescriptorsTheyReadTheirInputsThrough() throws IOException {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.isDirectory(Path.of("/proc/self/fd")),
        "descriptors are listed in /proc/self/fd");
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      fill(e, 0, 5000, 50, 4);
      e.flush();
      e.compactRange(null, null);
      e.awaitCompactions();
      assertThat(e.stats().compactions()).isPositive();
      try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".sst")).toList()) {
          // At most the table cache's own descriptor: none left behind by a compaction.
          assertThat(io.shale.engine.io.ReadAdvice.descriptorsOf(f)).hasSizeLessThanOrEqualTo(1);
        }
      }
    }
  }

  private static double bitsPerKey(EngineStats.LevelStats l) {
    // Each filter stores one probe-count byte besides its bits.
    return (l.bloomBytes() - l.files()) * 8.0 / l.entries();
  }

  @Test
  void pointReadsOfAbsentKeysSkipTablesWhoseFilterSaysNo() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      fill(e, 0, 5000, 50, 3);
      e.flush();
      e.awaitCompactions();
      assertThat(e.stats().totalFiles()).isGreaterThan(3);
      long missesBefore = e.stats().blockCacheMisses();
      for (int i = 0; i < 5000; i++) {
        assertThat(e.get(b("absent-" + i))).isNull();
      }
      long blockReads = e.stats().blockCacheMisses() - missesBefore;
      // Without filters every probe would read a block of every overlapping table; with 14-16
      // bits per key, a handful of false positives at most.
      assertThat(blockReads).isLessThan(30);
    }
  }
}
