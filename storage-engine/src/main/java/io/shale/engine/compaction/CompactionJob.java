package io.shale.engine.compaction;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * Runs one {@link Compaction} against a retained version and returns the edit that publishes it.
 * The caller logs the edit; until then the outputs are invisible and a crash leaves them as orphans
 * that the next open deletes.
 */
public final class CompactionJob {
  private final Compaction compaction;
  private final Version version;
  private final TableCache tables;
  private final TableOutput output;
  private final BooleanSupplier stop;
  private final java.util.function.LongConsumer readCharge;
  private final BlobRelocation relocation;

  /** What the job did, for stats and the event log. */
  public record Outcome(
      VersionEdit edit,
      Compaction compaction,
      List<FileMetadata> outputs,
      long bytesRead,
      long bytesWritten,
      long entriesIn,
      long entriesDropped,
      boolean trivialMove,
      List<VersionEdit.BlobGarbage> blobGarbage,
      List<BlobFileMeta> newBlobFiles,
      long relocatedBytes) {}

  /**
   * @param readCharge told the size of every block read (the I/O budget)
   * @param relocation moves the values of blob files being collected on the way (null: none)
   */
  public CompactionJob(
      Compaction compaction,
      Version version,
      TableCache tables,
      TableOutput output,
      BooleanSupplier stop,
      java.util.function.LongConsumer readCharge,
      BlobRelocation relocation) {
    this.relocation = relocation;
    this.compaction = compaction;
    this.version = version;
    this.tables = tables;
    this.output = output;
    this.stop = stop;
    this.readCharge = readCharge;
  }

  /**
   * True if no level below the output level holds {@code key}: a tombstone for it hides nothing and
   * may be dropped. A deeper table whose range holds the key rules it out unless its filter says
   * the key is absent (filters have no false negatives), so a delete of a key that was already
   * gone, or whose older versions compaction has already dropped, leaves no tombstone behind at its
   * first compaction. Safe while this job runs: a version of the key can only reach a deeper level
   * from this job's own inputs (levels above hold newer versions, and every file of the output
   * level in range is an input). Keys arrive in ascending order, so each deeper level keeps a
   * cursor and the whole job costs one pass over the deeper files' boundaries.
   */
  private Predicate<byte[]> tombstoneHidesNothing(DeeperFilters filters) {
    int first = compaction.outputLevel() + 1;
    int n = version.numLevels();
    int[] cursor = new int[n];
    return key -> {
      for (int l = first; l < n; l++) {
        List<FileMetadata> files = version.files(l);
        while (cursor[l] < files.size()
            && Keys.compare(files.get(cursor[l]).largestKey(), key) < 0) {
          cursor[l]++;
        }
        if (cursor[l] < files.size()
            && Keys.compare(files.get(cursor[l]).smallestKey(), key) <= 0
            && filters.mayContain(l, files.get(cursor[l]), key)) {
          return false;
        }
      }
      return true;
    };
  }

  /**
   * The filters of the deeper tables a job's tombstones are checked against: one reader held per
   * level (its cursor's file), so a run of tombstones in one file acquires it once. Closed with the
   * job.
   */
  private final class DeeperFilters implements AutoCloseable {
    private final TableReader[] held = new TableReader[version.numLevels()];

    boolean mayContain(int level, FileMetadata f, byte[] key) {
      TableReader r = held[level];
      if (r == null || r.fileNumber() != f.number()) {
        if (r != null) {
          r.release();
          held[level] = null;
        }
        try {
          r = tables.acquire(f.number());
        } catch (IOException e) {
          throw new UncheckedIOException(
              "opening table " + f.number() + " to check a tombstone", e);
        }
        held[level] = r;
      }
      return r.mayContain(key);
    }

    @Override
    public void close() {
      for (int l = 0; l < held.length; l++) {
        if (held[l] != null) {
          held[l].release();
          held[l] = null;
        }
      }
    }
  }

  /** Cuts outputs that would overlap more than 10 target files of the level below the output. */
  private GrandparentBoundary grandparentBoundary() {
    int below = compaction.outputLevel() + 1;
    List<FileMetadata> grandparents =
        below >= version.numLevels()
            ? List.of()
            : version.overlapping(below, compaction.smallestKey(), compaction.largestKey());
    return new GrandparentBoundary(grandparents, 10 * output.targetFileSize());
  }

  private boolean rangeIsBottommost() {
    byte[] lo = compaction.smallestKey();
    byte[] hi = compaction.largestKey();
    for (int l = compaction.outputLevel() + 1; l < version.numLevels(); l++) {
      if (!version.overlapping(l, lo, hi).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  public Outcome run() throws IOException {
    List<VersionEdit.Removed> removed = new ArrayList<>();
    for (FileMetadata f : compaction.inputs()) {
      removed.add(new VersionEdit.Removed(compaction.level(), f.number()));
    }
    for (FileMetadata f : compaction.outputLevelInputs()) {
      removed.add(new VersionEdit.Removed(compaction.outputLevel(), f.number()));
    }
    // Trivial move: one file, nothing to merge with, and no tombstone that rewriting would drop.
    if (compaction.inputs().size() == 1
        && compaction.outputLevelInputs().isEmpty()
        && compaction.level() > 0
        && (compaction.inputs().get(0).properties().tombstones() == 0 || !rangeIsBottommost())) {
      FileMetadata f = compaction.inputs().get(0);
      VersionEdit edit =
          VersionEdit.of(List.of(new VersionEdit.Added(compaction.outputLevel(), f)), removed);
      return new Outcome(edit, compaction, List.of(f), 0, 0, 0, 0, true, List.of(), List.of(), 0);
    }
    List<TableReader> readers = new ArrayList<>();
    List<InternalIterator> its = new ArrayList<>();
    try {
      int inputs = compaction.allInputs().size();
      for (FileMetadata f : compaction.allInputs()) {
        TableReader r = tables.acquire(f.number());
        readers.add(r);
        its.add(r.compactionIterator(inputs, readCharge));
      }
      TableOutput.Result result = null;
      List<BlobFileMeta> newBlobs = List.of();
      try (MergingIterator merged = new MergingIterator(its, Direction.FORWARD);
          DeeperFilters filters = new DeeperFilters()) {
        result =
            output.write(
                merged, tombstoneHidesNothing(filters), relocation, stop, grandparentBoundary());
        if (relocation != null) {
          newBlobs = relocation.finish();
        }
      } catch (IOException | RuntimeException e) {
        if (relocation != null) {
          relocation.abandon();
        }
        if (result != null) {
          for (FileMetadata f : result.files()) {
            java.nio.file.Files.deleteIfExists(output.pathOf(f.number()));
          }
        }
        throw e;
      }
      List<VersionEdit.Added> added = new ArrayList<>();
      for (FileMetadata f : result.files()) {
        added.add(new VersionEdit.Added(compaction.outputLevel(), f));
      }
      List<VersionEdit.BlobGarbage> garbage =
          relocation == null
              ? result.blobGarbage()
              : VersionEdit.BlobGarbage.merge(result.blobGarbage(), relocation.movedOut());
      VersionEdit edit = VersionEdit.of(added, removed).withBlobs(newBlobs, garbage, List.of());
      return new Outcome(
          edit,
          compaction,
          result.files(),
          compaction.inputBytes(),
          result.bytesWritten(),
          result.entriesIn(),
          result.entriesDropped(),
          false,
          garbage,
          newBlobs,
          relocation == null ? 0 : relocation.relocatedBytes());
    } finally {
      for (TableReader r : readers) {
        r.release();
      }
    }
  }
}
