package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.metrics.EngineCounters;
import io.shale.engine.metrics.EventLog;
import io.shale.engine.pressure.IoBudget;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
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
   * Write {@code m} to level 0 and log its edit; the caller then drops it from the memtable list.
   */
  public void flush(Memtable m) throws IOException {
    long started = System.nanoTime();
    FlushJob.Outcome o =
        new FlushJob(
                dir,
                options.table(),
                options.bloom(),
                options.blob(),
                versions::newFileNumber,
                ioBudget::record)
            .run(m);
    versions.logAndApply(o.edit());
    if (m.isEmpty()) {
      counters.emptyFlush();
    } else {
      counters.flushed(o.bytes());
    }
    eventLog.flush(
        m.id(),
        m.entryCount(),
        m.largestSequence(),
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
    CompactionJob.Outcome o = new CompactionJob(c, v, tableCache, output, stop, n -> {}).run();
    if (!o.trivialMove()) {
      DurableFiles.syncDirectory(dir);
    }
    versions.logAndApply(o.edit());
    versionInstalled.run();
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
    versions.logAndApply(o.edit());
    versionInstalled.run();
    counters.blobGcDone(o.relocatedBytes(), plan.allTables(), o.outputs());
    eventLog.blobGc(
        plan.file(),
        o.relocatedBytes(),
        plan.allTables(),
        o.outputs(),
        o.newBlobFiles(),
        System.nanoTime() - started);
  }
}
