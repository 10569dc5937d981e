package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.version.FileNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Snapshots and iterators pin the table generations they read; closing them releases the files. */
class SnapshotPinningTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void write(Engine e, long index, String value, int keys) {
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < keys; i++) {
      batch.put(b(String.format("k%04d", i)), b(value + "-" + i + "-" + "x".repeat(40)));
    }
    e.apply(batch, index);
  }

  private Set<String> tables() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> FileNames.parseTable(n) >= 0)
          .collect(Collectors.toSet());
    }
  }

  @Test
  void snapshotReadsOldValuesAfterCompactionDeletedItsFilesFromTheVersion() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      write(e, 1, "old", 1000);
      e.compactRange();
      Set<String> oldTables = tables();
      assertThat(oldTables).isNotEmpty();

      Snapshot snap = e.snapshot();
      ScanIterator pinnedScan = e.scan(ScanOptions.all());
      write(e, 2, "new", 1000);
      WriteBatch deletes = new WriteBatch();
      for (int i = 0; i < 1000; i += 2) {
        deletes.delete(b(String.format("k%04d", i)));
      }
      e.apply(deletes, 3);
      e.compactRange();

      // The current version no longer lists the old tables, but they are still on disk.
      Set<String> now = tables();
      assertThat(now).containsAll(oldTables);
      assertThat(e.stats().pinnedObsoleteBytes()).isGreaterThan(0);
      assertThat(e.get(b("k0000"))).isNull();
      assertThat(new String(e.get(b("k0001")), StandardCharsets.UTF_8)).startsWith("new-1-");

      // The snapshot and the iterator opened before still see the old generation, intact.
      for (int i = 0; i < 1000; i++) {
        assertThat(new String(snap.get(b(String.format("k%04d", i))), StandardCharsets.UTF_8))
            .startsWith("old-" + i + "-");
      }
      List<String> snapKeys = ModelBasedEngineTest.contents(snap);
      assertThat(snapKeys).hasSize(1000);
      int n = 0;
      while (pinnedScan.next()) {
        assertThat(new String(pinnedScan.value(), StandardCharsets.UTF_8)).startsWith("old-");
        n++;
      }
      assertThat(n).isEqualTo(1000);

      // Closing one reader is not enough; closing both releases the old files.
      snap.close();
      e.awaitCompactions(); // deletions run on the engine's own thread
      assertThat(tables()).containsAll(oldTables);
      pinnedScan.close();
      e.awaitCompactions();
      Set<String> after = tables();
      for (String t : oldTables) {
        assertThat(after).as("old table %s deleted once unpinned", t).doesNotContain(t);
      }
      assertThat(e.stats().pinnedObsoleteBytes()).isZero();
      assertThat(e.stats().openSnapshots()).isZero();
    }
  }

  @Test
  void snapshotIgnoresWritesMadeAfterIt() throws IOException {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      write(e, 10, "a", 50);
      try (Snapshot s = e.snapshot()) {
        assertThat(s.appliedIndex()).isEqualTo(10);
        for (int i = 11; i < 200; i++) {
          write(e, i, "v" + i, 50);
        }
        e.flush();
        assertThat(new String(s.get(b("k0007")), StandardCharsets.UTF_8)).startsWith("a-7-");
        assertThat(new String(e.get(b("k0007")), StandardCharsets.UTF_8)).startsWith("v199-7-");
      }
    }
  }

  /**
   * A scan still open when its engine closes releases its tables later. By then the directory may
   * hold another engine's files under the same numbers (a node swaps a fetched checkpoint in for
   * its engine directory): the late release must not delete them.
   */
  @Test
  void aScanReleasedAfterItsEngineClosedDeletesNothing() throws IOException {
    Path engineDir = dir.resolve("engine");
    Path checkpoint = dir.resolve("checkpoint");
    ScanIterator late;
    try (Engine e = Engine.open(engineDir, TestOptions.tiny())) {
      write(e, 1, "old", 1000);
      e.compactRange();
      e.checkpoint(checkpoint); // the same table numbers as the version the scan pins
      late = e.scan(ScanOptions.all());
      write(e, 2, "new", 1000);
      e.compactRange(); // the pinned tables are obsolete now, kept for the scan
    }
    // The swap: the checkpoint becomes the engine directory, and an engine opens it.
    Path old = dir.resolve("engine-old");
    Files.move(engineDir, old);
    Files.move(checkpoint, engineDir);
    try (Engine reopened = Engine.open(engineDir, TestOptions.tiny())) {
      late.close();
      assertThat(reopened.get(b("k0007"))).isEqualTo(b("old-7-" + "x".repeat(40)));
      try (ScanIterator all = reopened.scan(ScanOptions.all())) {
        int n = 0;
        while (all.next()) {
          n++;
        }
        assertThat(n).isEqualTo(1000);
      }
    }
  }
}
