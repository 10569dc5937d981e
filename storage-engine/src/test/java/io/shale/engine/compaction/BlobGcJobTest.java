package io.shale.engine.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobOptions;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.io.FileReads;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.ValueKind;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Blob GC of one file: it is picked once its dead bytes reach the threshold, its live values move
 * to a new blob file, the tables pointing into it are rewritten to point at the new one, and the
 * edit removes the old file; every value still reads back.
 */
class BlobGcJobTest {
  private static final TableWriteOptions TABLES = new TableWriteOptions(4096, 16, Compression.LZ4);

  @TempDir Path dir;
  private final AtomicLong numbers = new AtomicLong();
  private TableCache tables;
  private BlobFiles blobs;

  @AfterEach
  void close() {
    if (tables != null) {
      tables.close();
    }
    if (blobs != null) {
      blobs.close();
    }
  }

  private static byte[] value(int i) {
    byte[] v = new byte[10_000];
    Arrays.fill(v, (byte) i);
    return v;
  }

  @Test
  void liveValuesMoveToANewBlobFileAndTheTablesFollow() throws IOException {
    Memtable m = new Memtable(0);
    for (int i = 0; i < 20; i++) {
      m.add(("k" + i).getBytes(UTF_8), i + 1, ValueKind.VALUE, value(i));
    }
    BlobSeparation separation =
        new BlobSeparation(
            BlobOptions.DEFAULT, numbers::incrementAndGet, n -> FileNames.blob(dir, n), n -> {});
    TableOutput out =
        new TableOutput(
            numbers::incrementAndGet,
            n -> FileNames.table(dir, n),
            TABLES,
            1,
            10,
            Long.MAX_VALUE,
            n -> {});
    FileMetadata table;
    try (InternalIterator it = m.iterator(Direction.FORWARD)) {
      table = out.write(it, k -> false, separation, () -> false).files().get(0);
    }
    List<BlobFileMeta> written = separation.finish();
    assertThat(written).hasSize(1);
    BlobFileMeta blob = written.get(0);
    assertThat(table.properties().referencesBlob(blob.number())).isTrue();

    // Half of the file's bytes are dead (values a newer version replaced elsewhere).
    BlobFileMeta half = blob.plusGarbage(blob.totalBytes() / 2, 10);
    Version v =
        Version.empty(4)
            .apply(
                VersionEdit.of(List.of(new VersionEdit.Added(1, table)), List.of())
                    .withBlobs(List.of(half), List.of(), List.of()));
    assertThat(BlobGcJob.pick(v, 0.6, Set.of())).as("below the threshold").isNull();
    assertThat(BlobGcJob.pick(v, 0.5, Set.of(table.number()))).as("its table is busy").isNull();
    BlobGcJob.Plan plan = BlobGcJob.pick(v, 0.5, Set.of());
    assertThat(plan).isNotNull();
    assertThat(plan.allTables()).containsExactly(table);

    tables = new TableCache(10, new BlockCache(1 << 20), n -> FileNames.table(dir, n), false);
    blobs = new BlobFiles(n -> FileNames.blob(dir, n));
    BlobGcJob.Outcome o =
        new BlobGcJob(
                plan,
                tables,
                blobs,
                numbers::incrementAndGet,
                n -> FileNames.table(dir, n),
                n -> FileNames.blob(dir, n),
                TABLES,
                l -> 10,
                l -> Long.MAX_VALUE,
                n -> {},
                () -> false)
            .run();

    assertThat(o.newBlobFiles()).hasSize(1);
    long newBlob = o.newBlobFiles().get(0).number();
    assertThat(newBlob).isNotEqualTo(blob.number());
    assertThat(o.relocatedBytes()).isEqualTo(20L * 10_000);
    assertThat(o.edit().removed()).containsExactly(new VersionEdit.Removed(1, table.number()));
    assertThat(o.edit().blobsRemoved()).containsExactly(blob.number());
    assertThat(o.outputs()).hasSize(1);
    FileMetadata rewritten = o.outputs().get(0);
    assertThat(rewritten.properties().referencesBlob(newBlob)).isTrue();
    assertThat(rewritten.properties().referencesBlob(blob.number())).isFalse();

    // Every key still reads back its value, through a pointer into the new file.
    Map<String, byte[]> read = new HashMap<>();
    TableReader r = tables.acquire(rewritten.number());
    try (InternalIterator it = r.iterator(Direction.FORWARD)) {
      for (it.seekToFirst(); it.valid(); it.next()) {
        assertThat(it.kind()).isEqualTo(ValueKind.BLOB_POINTER);
        BlobPointer p = BlobPointer.decode(it.value());
        assertThat(p.fileNumber()).isEqualTo(newBlob);
        read.put(new String(it.userKey(), UTF_8), blobs.read(p, FileReads.Cause.POINT_READ));
      }
    } finally {
      r.release();
    }
    assertThat(read).hasSize(20);
    for (int i = 0; i < 20; i++) {
      assertThat(read.get("k" + i)).isEqualTo(value(i));
    }
  }
}
