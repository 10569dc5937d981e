package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.metrics.EngineCounters;
import io.shale.engine.metrics.EventLog;
import io.shale.engine.pressure.IoBudget;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * Runs one flush, compaction or blob GC to the end: writes its files, logs its version edit
 * (durable before the new version is installed), tells the engine a version was installed, and
 * records the job in the counters and the event log. Choosing jobs and running them concurrently is
 * {@link BackgroundScheduler}'s; this class holds no lock and no state of its own.
 */
public final class BackgroundJobs {
  private final Path dir;
  private final JobOptions options;
  private final VersionSet versions;
  private final TableCache tableCache;
  private final BlobFiles blobFiles;
  private final IoBudget ioBudget;
  private final EngineCounters counters;
  private final EventLog eventLog;
  private final Runnable versionInstalled;
  private final BooleanSupplier stop;

  /**
   * @param versionInstalled run after every new version (republish the read state, recompute write
   *     pressure); not run after a flush, whose memtable list does both
   * @param stop polled by jobs between keys; true once the engine is closing
   */
  public BackgroundJobs(
      Path dir,
      JobOptions options,
      VersionSet versions,
      TableCache tableCache,
      BlobFiles blobFiles,
      IoBudget ioBudget,
      EngineCounters counters,
      EventLog eventLog,
      Runnable versionInstalled,
      BooleanSupplier stop) {
    this.dir = dir;
    this.options = options;
    this.versions = versions;
    this.tableCache = tableCache;
    this.blobFiles = blobFiles;
    this.ioBudget = ioBudget;
    this.counters = counters;
    this.eventLog = eventLog;
    this.versionInstalled = versionInstalled;
    this.stop = stop;
  }

  /**
   * Write {@code sealed} (oldest first) merged to level 0 and log its edit; the caller then drops
   * them from the memtable list.
   */
  public void flush(List<Memtable> sealed) throws IOException {
    long started = System.nanoTime();
    FlushJob.Outcome o =
        new FlushJob(
                dir,
                options.table(),
                options.bloom(),
                options.blob(),
                versions::newFileNumber,
                ioBudget::record)
            .run(sealed);
    versions.logAndApply(o.edit());
    if (o.tables().isEmpty()) {
      counters.emptyFlush();
    } else {
      counters.flushed(o.bytes());
    }
    long entries = 0;
    for (Memtable m : sealed) {
      entries += m.entryCount();
    }
    Memtable newest = sealed.get(sealed.size() - 1);
    eventLog.flush(
        sealed.get(0).id(),
        sealed.size(),
        entries,
        newest.largestSequence(),
        o.tables(),
        o.blobs(),
        System.nanoTime() - started);
  }

  /** Run compaction {@code c} over version {@code v} (retained by the caller). */
  public void compact(Compaction c, Version v) throws IOException {
    long started = System.nanoTime();
    int out = c.outputLevel();
    TableOutput output =
        new TableOutput(
            versions::newFileNumber,
            n -> FileNames.table(dir, n),
            options.table(),
            out,
            options.bloom().bitsPerKey(out),
            options.compaction().targetFileSizeBytes(),
            ioBudget::acquire);
    CompactionJob.Outcome o =
        new CompactionJob(c, v, tableCache, output, stop, n -> {}, relocationFor(v)).run();
    if (!o.trivialMove()) {
      DurableFiles.syncDirectory(dir);
    }
    VersionEdit recorded = versions.logAndApply(o.edit());
    versionInstalled.run();
    if (o.relocatedBytes() > 0 || !recorded.blobsRemoved().isEmpty()) {
      counters.blobsRelocatedInCompaction(o.relocatedBytes(), reclaimedBytes(v, recorded));
    }
    String reason = c.reason().name().toLowerCase(Locale.ROOT);
    counters.compacted(
        c.level(),
        reason,
        o.trivialMove(),
        o.bytesRead(),
        o.bytesWritten(),
        c.allInputs(),
        o.outputs());
    eventLog.compaction(
        reason,
        c.score(),
        c.level(),
        c.outputLevel(),
        o.trivialMove(),
        c.inputs(),
        c.outputLevelInputs(),
        o.outputs(),
        o.entriesDropped(),
        System.nanoTime() - started);
  }

  /**
   * Moves the values of the blob files of {@code v} whose garbage reached the GC threshold, so that
   * compactions empty them as they go; null if blobs are off or no file is due.
   */
  private BlobRelocation relocationFor(Version v) {
    if (!options.blob().enabled()) {
      return null;
    }
    java.util.Set<Long> due = new java.util.HashSet<>();
    for (BlobFileMeta b : v.blobFiles().values()) {
      if (b.garbageRatio() >= options.blob().gcThresholdRatio()) {
        due.add(b.number());
      }
    }
    return due.isEmpty()
        ? null
        : new BlobRelocation(
            due::contains,
            blobFiles,
            versions::newFileNumber,
            n -> FileNames.blob(dir, n),
            ioBudget::acquire);
  }

  /** File bytes of the blob files {@code edit} removed (all present in {@code before}). */
  private static long reclaimedBytes(Version before, VersionEdit edit) {
    long sum = 0;
    for (long n : edit.blobsRemoved()) {
      BlobFileMeta b = before.blobFiles().get(n);
      sum += b == null ? 0 : b.fileSize();
    }
    return sum;
  }

  /** Relocate the live values of {@code plan}'s blob file, rewriting the tables that point in. */
  public void collectBlobGarbage(BlobGcJob.Plan plan) throws IOException {
    long started = System.nanoTime();
    BlobGcJob.Outcome o =
        new BlobGcJob(
                plan,
                tableCache,
                blobFiles,
                versions::newFileNumber,
                n -> FileNames.table(dir, n),
                n -> FileNames.blob(dir, n),
                options.table(),
                options.bloom()::bitsPerKey,
                options.compaction()::targetBytesPerFile,
                ioBudget::acquire,
                stop)
            .run();
    DurableFiles.syncDirectory(dir);
    VersionEdit recorded = versions.logAndApply(o.edit());
    versionInstalled.run();
    counters.blobGcDone(
        o.relocatedBytes(),
        plan.allTables(),
        o.outputs(),
        o.tableBytesWritten(),
        plan.file().fileSize());
    eventLog.blobGc(
        plan.file(),
        o.relocatedBytes(),
        plan.allTables(),
        o.outputs(),
        o.newBlobFiles(),
        System.nanoTime() - started);
  }
}
