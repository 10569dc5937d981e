package io.shale.engine.version;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.CorruptionException;
import io.shale.engine.sstable.TableProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The version set recovers exactly what its manifest made durable: files per level, the applied
 * index and the next file number; a torn last record is an unfinished append, a damaged one is
 * corruption with the file and offset.
 */
class VersionSetRecoveryTest {
  @TempDir Path dir;
  private final List<Long> deleted = new ArrayList<>();

  private VersionSet open() throws IOException {
    return VersionSet.open(dir, 4, deleted::add, n -> {});
  }

  /** A table file of {@code size} bytes (recovery checks existence and size only). */
  private FileMetadata table(long number, long size, String lo, String hi) throws IOException {
    Files.write(FileNames.table(dir, number), new byte[(int) size]);
    TableProperties p =
        new TableProperties(
            10, 0, 0, 0, 1, 0, 10, lo.getBytes(UTF_8), hi.getBytes(UTF_8), 1, 1, 0, 0);
    return new FileMetadata(number, size, p);
  }

  private static List<Long> numbers(Version v, int level) {
    return v.files(level).stream().map(FileMetadata::number).toList();
  }

  @Test
  void aBlobFileWhoseEveryValueIsCountedDeadIsRemovedByTheRecordThatEmptiesIt() throws IOException {
    List<Long> blobsDeleted = new ArrayList<>();
    long blob;
    try (VersionSet vs = VersionSet.open(dir, 4, deleted::add, blobsDeleted::add)) {
      blob = vs.newFileNumber();
      Files.write(FileNames.blob(dir, blob), new byte[500]);
      vs.logAndApply(
          VersionEdit.of(List.of(), List.of())
              .withBlobs(List.of(new BlobFileMeta(blob, 500, 300, 3, 0, 0)), List.of(), List.of()));
      VersionEdit partly =
          vs.logAndApply(
              VersionEdit.of(List.of(), List.of())
                  .withBlobs(
                      List.of(), List.of(new VersionEdit.BlobGarbage(blob, 200, 2)), List.of()));
      assertThat(partly.blobsRemoved()).isEmpty();
      assertThat(vs.current().blobFiles()).containsKey(blob);
      VersionEdit last =
          vs.logAndApply(
              VersionEdit.of(List.of(), List.of())
                  .withBlobs(
                      List.of(), List.of(new VersionEdit.BlobGarbage(blob, 100, 1)), List.of()));
      assertThat(last.blobsRemoved()).containsExactly(blob);
      assertThat(vs.current().blobFiles()).doesNotContainKey(blob);
      assertThat(blobsDeleted).as("no reader held the old version").containsExactly(blob);
    }
    try (VersionSet vs = open()) {
      assertThat(vs.current().blobFiles()).isEmpty();
    }
  }

  @Test
  void editsSurviveAReopen() throws IOException {
    long a;
    long b;
    long c;
    try (VersionSet vs = open()) {
      a = vs.newFileNumber();
      b = vs.newFileNumber();
      c = vs.newFileNumber();
      vs.logAndApply(
          new VersionEdit(
              List.of(new VersionEdit.Added(0, table(a, 100, "a", "f"))), List.of(), 10, -1));
      vs.logAndApply(
          new VersionEdit(
              List.of(new VersionEdit.Added(0, table(b, 200, "c", "k"))), List.of(), 20, -1));
      vs.logAndApply(
          new VersionEdit(
              List.of(new VersionEdit.Added(1, table(c, 300, "a", "k"))),
              List.of(new VersionEdit.Removed(0, a), new VersionEdit.Removed(0, b)),
              -1,
              -1));
    }
    try (VersionSet vs = open()) {
      Version v = vs.current();
      assertThat(numbers(v, 0)).isEmpty();
      assertThat(numbers(v, 1)).containsExactly(c);
      // Replaying the edits recomputes the flush table size: 100, then an eighth of the way to
      // 200; the compaction's edit rewrites level 0, so its output is not a flush.
      assertThat(v.level0TableBytes()).isEqualTo(112);
      assertThat(vs.persistedAppliedIndex()).isEqualTo(20);
      assertThat(vs.newFileNumber()).isGreaterThan(c);
      // The removed tables are listed no more: recovery deleted them.
      assertThat(Files.exists(FileNames.table(dir, a))).isFalse();
      assertThat(Files.exists(FileNames.table(dir, b))).isFalse();
      assertThat(Files.exists(FileNames.table(dir, c))).isTrue();
    }
  }

  /** One table at level 0, applied index 5; returns its number. */
  private long oneTable() throws IOException {
    try (VersionSet vs = open()) {
      long n = vs.newFileNumber();
      vs.logAndApply(
          new VersionEdit(
              List.of(new VersionEdit.Added(0, table(n, 100, "a", "b"))), List.of(), 5, -1));
      return n;
    }
  }

  @Test
  void aTornLastRecordIsAnUnfinishedAppendAndIsDropped() throws IOException {
    long n = oneTable();
    Path manifest = dir.resolve(VersionSet.currentManifestName(dir));
    // A record header promising 1,000 bytes, followed by only a few: a crash mid-append.
    byte[] torn = new byte[20];
    io.shale.engine.io.Varints.writeFixed32(torn, 0, 1000);
    io.shale.engine.io.Varints.writeFixed32(torn, 4, ~1000);
    Files.write(manifest, torn, StandardOpenOption.APPEND);
    try (VersionSet vs = open()) {
      assertThat(numbers(vs.current(), 0)).containsExactly(n);
      assertThat(vs.persistedAppliedIndex()).isEqualTo(5);
    }
  }

  @Test
  void aDamagedRecordIsCorruptionNamingTheManifestAndOffset() throws IOException {
    oneTable();
    Path manifest = dir.resolve(VersionSet.currentManifestName(dir));
    byte[] bytes = Files.readAllBytes(manifest);
    bytes[bytes.length - 3] ^= 0x55; // inside the last record's payload
    Files.write(manifest, bytes);
    assertThatThrownBy(this::open)
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining(manifest.getFileName().toString())
        .satisfies(e -> assertThat(((CorruptionException) e).offset()).isPositive());
  }

  @Test
  void aListedTableThatIsMissingOrOfTheWrongSizeIsCorruption() throws IOException {
    long n = oneTable();
    Files.write(FileNames.table(dir, n), new byte[99]);
    assertThatThrownBy(this::open)
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining(FileNames.tableName(n))
        .hasMessageContaining("manifest says 100");
    Files.delete(FileNames.table(dir, n));
    assertThatThrownBy(this::open)
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining("missing");
  }

  /**
   * The rename of CURRENT succeeded but the directory fsync after it failed: the new manifest must
   * stay (CURRENT names it), so the database opens again with everything it held.
   */
  @Test
  void aFailedFsyncAfterTheCurrentRenameNeverLeavesCurrentNamingAMissingManifest()
      throws IOException {
    long a = oneTableAtIndex10();
    assertOpenFailsWith(
        (d, name) -> {
          VersionSet.writeCurrent(d, name);
          throw new IOException("injected: directory fsync failed");
        });
    try (VersionSet vs = open()) {
      assertThat(numbers(vs.current(), 0)).containsExactly(a);
      assertThat(vs.persistedAppliedIndex()).isEqualTo(10);
    }
  }

  /** A failure before the rename leaves the old manifest named and the new one removed. */
  @Test
  void aFailedCurrentWriteBeforeTheRenameRemovesTheNewManifest() throws IOException {
    oneTableAtIndex10();
    assertOpenFailsWith(
        (d, name) -> {
          throw new IOException("injected: disk full");
        });
    long manifests;
    try (var files = Files.list(dir)) {
      manifests =
          files.filter(p -> FileNames.parseManifest(p.getFileName().toString()) >= 0).count();
    }
    assertThat(manifests).isEqualTo(1);
    try (VersionSet vs = open()) {
      assertThat(vs.persistedAppliedIndex()).isEqualTo(10);
    }
  }

  /** A version set holding one level-0 table, persisted at index 10; returns the table's number. */
  private long oneTableAtIndex10() throws IOException {
    try (VersionSet vs = open()) {
      long a = vs.newFileNumber();
      vs.logAndApply(
          new VersionEdit(
              List.of(new VersionEdit.Added(0, table(a, 100, "a", "f"))), List.of(), 10, -1));
      return a;
    }
  }

  private void assertOpenFailsWith(VersionSet.CurrentWriter failing) {
    assertThatThrownBy(() -> VersionSet.open(dir, 4, deleted::add, n -> {}, failing))
        .hasMessageContaining("injected");
  }
}
