package io.shale.engine.compaction;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Writes sealed memtables (oldest first, consecutive) merged into one run of level-0 tables (and,
 * with blob separation, their large values to blob files), synced with their directory, and returns
 * the version edit that lists them. Merging every memtable that waits, rather than one table run
 * per memtable, gives level 0 fewer and larger files when flushes fall behind a burst, so each
 * level-0 compaction rewrites level 1 for more data. Every version of every key is kept: the
 * memtables' sequences do not overlap, so the merge is a plain interleaving. The edit carries the
 * newest memtable's highest index, so files and persisted index become durable together when the
 * edit is logged. Empty memtables yield an edit with no files that only advances the index. On
 * failure no file of the job is referenced by any version.
 */
public final class FlushJob {
  /** The edit to log, the files it adds and their bytes on disk. */
  public record Outcome(
      VersionEdit edit, List<FileMetadata> tables, List<BlobFileMeta> blobs, long bytes) {}

  private final Path dir;
  private final TableWriteOptions table;
  private final BloomPolicy bloom;
  private final BlobOptions blob;
  private final LongSupplier newFileNumber;
  private final LongConsumer writeCharge;

  /**
   * @param writeCharge told the size of everything written (the I/O budget's accounting)
   */
  public FlushJob(
      Path dir,
      TableWriteOptions table,
      BloomPolicy bloom,
      BlobOptions blob,
      LongSupplier newFileNumber,
      LongConsumer writeCharge) {
    this.dir = dir;
    this.table = table;
    this.bloom = bloom;
    this.blob = blob;
    this.newFileNumber = newFileNumber;
    this.writeCharge = writeCharge;
  }

  /** Precondition: {@code sealed} is non-empty, oldest first. */
  public Outcome run(List<Memtable> sealed) throws IOException {
    List<FileMetadata> tables = new ArrayList<>();
    List<BlobFileMeta> blobs = List.of();
    long bytes = 0;
    List<Memtable> nonEmpty = sealed.stream().filter(m -> !m.isEmpty()).toList();
    if (!nonEmpty.isEmpty()) {
      TableOutput out =
          new TableOutput(
              newFileNumber,
              n -> FileNames.table(dir, n),
              table,
              0,
              bloom.bitsPerKey(0),
              Long.MAX_VALUE,
              writeCharge);
      BlobSeparation separation =
          blob.enabled()
              ? new BlobSeparation(blob, newFileNumber, n -> FileNames.blob(dir, n), writeCharge)
              : null;
      TableOutput.Result r;
      try (InternalIterator it = iterator(nonEmpty)) {
        r = out.write(it, k -> false, separation, () -> false);
        blobs = separation == null ? List.of() : separation.finish();
      } catch (IOException | RuntimeException e) {
        if (separation != null) {
          separation.abandon();
        }
        throw e;
      }
      for (FileMetadata f : r.files()) {
        tables.add(f);
        bytes += f.size();
      }
      for (BlobFileMeta b : blobs) {
        bytes += b.fileSize();
      }
      DurableFiles.syncDirectory(dir);
    }
    List<VersionEdit.Added> added = new ArrayList<>();
    tables.forEach(f -> added.add(new VersionEdit.Added(0, f)));
    VersionEdit edit =
        new VersionEdit(added, List.of(), sealed.get(sealed.size() - 1).largestSequence(), -1)
            .withBlobs(blobs, List.of(), List.of());
    return new Outcome(edit, List.copyOf(tables), blobs, bytes);
  }

  private static InternalIterator iterator(List<Memtable> memtables) {
    if (memtables.size() == 1) {
      return memtables.get(0).iterator(Direction.FORWARD);
    }
    List<InternalIterator> children = new ArrayList<>();
    for (Memtable m : memtables) {
      children.add(m.iterator(Direction.FORWARD));
    }
    return new MergingIterator(children, Direction.FORWARD);
  }
}
