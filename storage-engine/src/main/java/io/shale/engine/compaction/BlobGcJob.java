package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.IntToLongFunction;
import java.util.function.IntUnaryOperator;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * Blob garbage collection of one blob file: every table whose pointers reach into it is rewritten
 * in place (same level, same keys and sequences), its live values copied to a new blob file on the
 * way; one version edit then swaps the tables, adds the new blob file and drops the old one. Until
 * that edit nothing is visible, and a crash leaves only unreferenced new files (deleted at the next
 * open): no pointer ever dangles. The old file is deleted once no version, snapshot, iterator or
 * checkpoint still holds it.
 *
 * <p>Tables are rewritten one by one, so each output stays inside its input's key range: a level's
 * files keep not overlapping, and a level-0 file keeps its sequence range.
 */
public final class BlobGcJob {
  /** What to collect: the blob file and the tables that reference it, by level. */
  public record Plan(BlobFileMeta file, TreeMap<Integer, List<FileMetadata>> tables) {
    public List<FileMetadata> allTables() {
      List<FileMetadata> all = new ArrayList<>();
      tables.values().forEach(all::addAll);
      return all;
    }
  }

  /** What the job did. */
  public record Outcome(
      VersionEdit edit,
      Plan plan,
      List<FileMetadata> outputs,
      List<BlobFileMeta> newBlobFiles,
      long tableBytesRead,
      long tableBytesWritten,
      long relocatedBytes) {}

  /**
   * A blob GC job may rewrite at most this many table bytes per byte of garbage it removes. Above
   * it the file waits for compactions, which move its values as they rewrite its tables anyway
   * ({@link BlobRelocation}): when every table points into every file (overwrites spread over the
   * key space), rewriting the referencing tables means rewriting the tree to reclaim one file.
   */
  static final int MAX_TABLE_BYTES_PER_GARBAGE_BYTE = 2;

  /**
   * The next blob file to collect: the oldest (lowest number) at or above the threshold whose
   * referencing tables are all free and weigh at most {@link #MAX_TABLE_BYTES_PER_GARBAGE_BYTE}
   * times its garbage; null if none. Oldest first, not most garbage first, so that a file just over
   * the threshold cannot be overtaken forever by files that keep filling up.
   */
  public static Plan pick(Version v, double threshold, Set<Long> busyFiles) {
    List<BlobFileMeta> due = new ArrayList<>();
    for (BlobFileMeta b : v.blobFiles().values()) {
      if (b.garbageRatio() >= threshold && !busyFiles.contains(b.number())) {
        due.add(b);
      }
    }
    due.sort(Comparator.comparingLong(BlobFileMeta::number));
    for (BlobFileMeta b : due) {
      TreeMap<Integer, List<FileMetadata>> tables = new TreeMap<>();
      boolean free = true;
      long tableBytes = 0;
      for (int l = 0; l < v.numLevels() && free; l++) {
        for (FileMetadata f : v.files(l)) {
          if (f.properties().referencesBlob(b.number())) {
            tableBytes += f.size();
            if (busyFiles.contains(f.number())
                || tableBytes > MAX_TABLE_BYTES_PER_GARBAGE_BYTE * b.garbageBytes()) {
              free = false;
              break;
            }
            tables.computeIfAbsent(l, k -> new ArrayList<>()).add(f);
          }
        }
      }
      if (free) {
        return new Plan(b, tables);
      }
    }
    return null;
  }

  private final Plan plan;
  private final TableCache tables;
  private final BlobFiles blobs;
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> tablePath;
  private final LongFunction<Path> blobPath;
  private final io.shale.engine.sstable.TableWriteOptions tableOptions;
  private final IntUnaryOperator bloomBits;
  private final IntToLongFunction targetFileSize;
  private final LongConsumer ioCharge;
  private final BooleanSupplier stop;

  public BlobGcJob(
      Plan plan,
      TableCache tables,
      BlobFiles blobs,
      LongSupplier newFileNumber,
      LongFunction<Path> tablePath,
      LongFunction<Path> blobPath,
      io.shale.engine.sstable.TableWriteOptions tableOptions,
      IntUnaryOperator bloomBits,
      IntToLongFunction targetFileSize,
      LongConsumer ioCharge,
      BooleanSupplier stop) {
    this.plan = plan;
    this.tables = tables;
    this.blobs = blobs;
    this.newFileNumber = newFileNumber;
    this.tablePath = tablePath;
    this.blobPath = blobPath;
    this.tableOptions = tableOptions;
    this.bloomBits = bloomBits;
    this.targetFileSize = targetFileSize;
    this.ioCharge = ioCharge;
    this.stop = stop;
  }

  public Outcome run() throws IOException {
    List<VersionEdit.Added> added = new ArrayList<>();
    List<VersionEdit.Removed> removed = new ArrayList<>();
    List<FileMetadata> outputs = new ArrayList<>();
    List<BlobFileMeta> newBlobs = new ArrayList<>();
    long read = 0;
    long written = 0;
    long relocated = 0;
    List<Runnable> undo = new ArrayList<>();
    BlobRelocation relocation =
        new BlobRelocation(
            n -> n == plan.file().number(), blobs, newFileNumber, blobPath, ioCharge);
    try {
      for (var e : plan.tables().entrySet()) {
        int level = e.getKey();
        // One table at a time: each output stays inside its input's key range, so the level's
        // files keep not overlapping (and level-0 files keep their sequence ranges).
        for (FileMetadata f : e.getValue()) {
          TableOutput out =
              new TableOutput(
                  newFileNumber,
                  tablePath,
                  tableOptions,
                  level,
                  bloomBits.applyAsInt(level),
                  level == 0 ? Long.MAX_VALUE : targetFileSize.applyAsLong(level),
                  ioCharge);
          TableOutput.Result r = rewrite(List.of(f), out, relocation);
          removed.add(new VersionEdit.Removed(level, f.number()));
          read += f.size();
          for (FileMetadata o : r.files()) {
            added.add(new VersionEdit.Added(level, o));
            outputs.add(o);
            written += o.size();
            undo.add(() -> deleteQuietly(tablePath.apply(o.number())));
          }
        }
      }
      for (BlobFileMeta b : relocation.finish()) {
        newBlobs.add(b);
        written += b.fileSize();
        undo.add(() -> deleteQuietly(blobPath.apply(b.number())));
      }
      relocated = relocation.relocatedBytes();
    } catch (IOException | RuntimeException ex) {
      relocation.abandon();
      undo.forEach(Runnable::run);
      throw ex;
    }
    VersionEdit edit =
        VersionEdit.of(added, removed)
            .withBlobs(newBlobs, List.of(), List.of(plan.file().number()));
    return new Outcome(edit, plan, outputs, newBlobs, read, written, relocated);
  }

  private TableOutput.Result rewrite(
      List<FileMetadata> group, TableOutput out, BlobRelocation relocation) throws IOException {
    List<TableReader> readers = new ArrayList<>();
    List<InternalIterator> its = new ArrayList<>();
    try {
      for (FileMetadata f : group) {
        TableReader r = tables.acquire(f.number());
        readers.add(r);
        its.add(r.compactionIterator(group.size(), n -> {}));
      }
      try (MergingIterator merged = new MergingIterator(its, Direction.FORWARD)) {
        return out.write(merged, k -> false, relocation, stop);
      }
    } finally {
      readers.forEach(TableReader::release);
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      java.nio.file.Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // an unreferenced file is removed at the next open
    }
  }
}
