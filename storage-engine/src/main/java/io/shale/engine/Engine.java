package io.shale.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.compaction.BackgroundJobs;
import io.shale.engine.compaction.BackgroundScheduler;
import io.shale.engine.compaction.CompactionPicker;
import io.shale.engine.compaction.JobOptions;
import io.shale.engine.concurrent.BackgroundState;
import io.shale.engine.concurrent.ReadGate;
import io.shale.engine.io.DirectoryLock;
import io.shale.engine.io.FileReads;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import io.shale.engine.memtable.ChunkPool;
import io.shale.engine.memtable.MemtableList;
import io.shale.engine.memtable.ReadState;
import io.shale.engine.metrics.EngineCounters;
import io.shale.engine.metrics.EngineMetrics;
import io.shale.engine.metrics.EventLog;
import io.shale.engine.pressure.IoBudget;
import io.shale.engine.pressure.WriteController;
import io.shale.engine.pressure.WritePressure;
import io.shale.engine.pressure.WriteThrottledException;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableMemory;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.ObsoleteFiles;
import io.shale.engine.version.TableLookup;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The LSM storage engine: one directory, one writer at a time, any number of readers.
 *
 * <p>Durability: no write-ahead log (under Raft, the Raft log is one). Every batch carries a
 * caller-supplied, strictly increasing index; a flush makes the batches up to the memtable's
 * highest index durable and records it ({@link #persistedAppliedIndex()}) atomically with the new
 * table. After a crash the engine reopens holding exactly the batches up to that index.
 *
 * <p>Thread-safe: {@link #apply} calls are serialised; reads never block writes nor each other.
 * Background work runs on one flush thread and {@code [lsm.compaction] threads} compaction threads.
 *
 * <p>A facade over {@link MemtableList} (memtables, read state), {@link TableLookup}, {@link
 * ScanBuilder}, {@link BackgroundScheduler} and {@link BackgroundJobs}, {@link EngineCounters},
 * {@link ObsoleteFiles} (file deletion) and {@link CheckpointWriter}.
 */
public final class Engine implements ReadView, AutoCloseable {
  private final Path dir;
  private final EngineOptions options;
  private final DirectoryLock lock;
  private final TableCache tableCache;
  private final BlobFiles blobFiles;
  private final ObsoleteFiles obsoleteFiles;
  private final VersionSet versions;
  private final BackgroundState background;
  private final MemtableList memtables;
  private final WriteController writeController;
  private final PressureTracker pressure;
  private final IoBudget ioBudget;
  private final EngineMetrics metrics;
  private final EngineCounters counters;
  private final EventLog eventLog;
  private final TableLookup tableLookup;
  private final ScanBuilder scans;
  private final BackgroundScheduler scheduler;
  private final EngineStatsReader statsReader;
  private final AtomicInteger openSnapshots = new AtomicInteger();
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Engine.class);

  private volatile boolean closed;

  /** Reads (gets and open scans) in flight; close waits for them. */
  private final ReadGate reads = new ReadGate();

  /** How long close waits for reads in flight before it releases files anyway. */
  private static final java.time.Duration READ_DRAIN_WAIT = java.time.Duration.ofSeconds(5);

  private Engine(Path dir, EngineOptions options, MeterRegistry registry) throws IOException {
    this.dir = dir;
    this.options = options;
    int numLevels = options.compaction().numLevels();
    this.lock = DirectoryLock.acquire(dir, FileNames.LOCK);
    try {
      BlockCache blockCache = new BlockCache(options.blockCacheBytes());
      FileReads fileReads = new FileReads();
      this.tableCache =
          new TableCache(
              options.maxOpenFiles(),
              blockCache,
              n -> FileNames.table(dir, n),
              options.mmapReads(),
              fileReads,
              options.adviseRandomReads(),
              new TableMemory(options.indexAndFilterMemoryBytes()));
      this.blobFiles =
          new BlobFiles(
              n -> FileNames.blob(dir, n),
              options.maxOpenFiles(),
              fileReads,
              options.blob().adviseRandomReads());
      this.obsoleteFiles = new ObsoleteFiles(dir, tableCache, blobFiles);
      this.versions =
          VersionSet.open(dir, numLevels, obsoleteFiles::deleteTable, obsoleteFiles::deleteBlob);
      // Nothing below touches the disk but the event log, which never throws.
      this.background = new BackgroundState(this::wakeWriters);
      this.memtables =
          new MemtableList(
              versions,
              options.memtableSizeBytes(),
              options.maxImmutableMemtables(),
              this::checkWritable);
      this.writeController = new WriteController(options.writePressure());
      this.pressure =
          new PressureTracker(
              versions, memtables, options.compaction(), options.writePressure(), writeController);
      this.ioBudget =
          new IoBudget(options.budget(), Clock.systemDefaultZone(), pressure::fractionOfSlowdown);
      this.eventLog = new EventLog(dir, 16L << 20);
      this.metrics = new EngineMetrics(registry, numLevels);
      this.counters = new EngineCounters(metrics, numLevels);
      this.tableLookup = new TableLookup(dir, tableCache, counters);
      this.scans = new ScanBuilder(dir, tableCache, blobFiles, options.blob().scanReadaheadBytes());
      JobOptions jobOptions =
          new JobOptions(options.table(), options.bloom(), options.blob(), options.compaction());
      CompactionPicker picker = new CompactionPicker(options.compaction());
      BackgroundJobs jobs =
          new BackgroundJobs(
              dir,
              jobOptions,
              versions,
              tableCache,
              blobFiles,
              ioBudget,
              counters,
              eventLog,
              this::versionInstalled,
              background::closing);
      this.scheduler =
          new BackgroundScheduler(dir, jobOptions, versions, picker, memtables, background, jobs);
      memtables.setListener(
          new MemtableList.Listener() {
            @Override
            public void sealed() {
              scheduler.scheduleFlush();
            }

            @Override
            public void changed() {
              pressure.update();
            }
          });
      this.statsReader =
          new EngineStatsReader(
              options,
              versions,
              memtables,
              picker,
              counters,
              pressure,
              writeController,
              blockCache,
              tableCache::filterAndIndexMemoryBytes,
              scheduler,
              openSnapshots::get,
              fileReads);
    } catch (IOException | RuntimeException e) {
      lock.close();
      throw e;
    }
    metrics.bind(statsReader);
    metrics.writePressureThresholds(options.writePressure());
    pressure.update();
    scheduler.maybeScheduleCompaction();
  }

  /**
   * Open (or create) the engine in {@code dir}.
   *
   * @throws io.shale.engine.io.CorruptionException if the manifest or a table is damaged
   * @throws IllegalStateException if another engine has the directory open
   */
  public static Engine open(Path dir, EngineOptions options) throws IOException {
    return new Engine(dir, options, new CompositeMeterRegistry());
  }

  /** Open with the engine's meters registered in {@code registry}. */
  public static Engine open(Path dir, EngineOptions options, MeterRegistry registry)
      throws IOException {
    return new Engine(dir, options, registry);
  }

  public Path directory() {
    return dir;
  }

  /** The native memory of the memtables (tests check it is all freed after close). */
  ChunkPool memtableMemory() {
    return memtables.chunks();
  }

  /** The native memory of the open tables (tests check it is all freed after close). */
  TableMemory tableMemory() {
    return tableCache.memory();
  }

  public EngineOptions options() {
    return options;
  }

  // ---------------------------------------------------------------------------------------------
  // Writes

  /**
   * Apply {@code batch} atomically at {@code index}, subject to write pressure: delayed when the
   * engine is DELAYED, refused when it is STOPPED (then the batch has no effect).
   *
   * @param index strictly greater than every index applied before, at most 2^56 - 1
   * @throws WriteThrottledException at a stop threshold of {@code [lsm.write_pressure]}
   * @throws IllegalArgumentException if the index does not increase
   * @throws EngineException if a background error made the engine read-only
   */
  public void apply(WriteBatch batch, long index) {
    admit(batch);
    applyCommitted(batch, index);
  }

  /**
   * Apply write pressure to {@code batch} without applying it: return at once when the engine is
   * NORMAL, wait for the batch's turn at {@code delayed_write_rate} when DELAYED, throw when
   * STOPPED. A caller that orders its writes (one index after another under a lock) admits each
   * batch before taking that lock and then calls {@link #applyCommitted}, so that one delayed
   * writer does not hold up the others.
   *
   * @throws WriteThrottledException at a stop threshold of {@code [lsm.write_pressure]}
   * @throws EngineException if a background error made the engine read-only
   */
  public void admit(WriteBatch batch) {
    checkWritable();
    try {
      long delayed = writeController.admit(batch.byteSize());
      if (delayed > 0) {
        counters.writeDelayed(delayed);
      }
    } catch (WriteThrottledException e) {
      counters.writeThrottled(e.pressure().cause().name());
      throw e;
    }
  }

  /**
   * Apply a batch that must not be refused: an entry a replicated log has already committed (the
   * Raft leader applied write pressure before the entry entered the log). Never delayed nor refused
   * for pressure; it only waits, as a last bound on memory, while {@code max_immutable_memtables}
   * sealed memtables wait for flush.
   */
  public void applyCommitted(WriteBatch batch, long index) {
    memtables.apply(
        index,
        m -> {
          for (WriteBatch.Op op : batch.ops()) {
            m.add(op.key(), index, op.kind(), op.value());
          }
        });
  }

  /** The current write pressure (recomputed after every flush, compaction and memtable seal). */
  public WritePressure writePressure() {
    return writeController.current();
  }

  /** Be told whenever the write pressure changes (condition, cause or delay). */
  public void addWritePressureListener(Consumer<WritePressure> listener) {
    writeController.addListener(listener);
  }

  public void removeWritePressureListener(Consumer<WritePressure> listener) {
    writeController.removeListener(listener);
  }

  /**
   * Make every batch applied so far durable: seal the memtable and wait until every sealed memtable
   * is flushed. Returns the new {@link #persistedAppliedIndex()}.
   */
  public long flush() {
    memtables.sealAndAwaitFlush();
    return versions.persistedAppliedIndex();
  }

  private void checkWritable() {
    if (closed || background.closing()) {
      throw new IllegalStateException("engine " + dir + " is closed");
    }
    Throwable e = background.error();
    if (e != null) {
      throw new EngineException(
          "engine " + dir + " accepts no writes after a background failure: " + e, e);
    }
  }

  private void wakeWriters() {
    memtables.wakeWaiters();
  }

  /** A background job installed a new version: readers and write pressure follow it. */
  private void versionInstalled() {
    memtables.publish();
    pressure.update();
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  private ReadState acquireReadState(long[] sequenceOut) {
    return memtables.acquire(sequenceOut, this::ensureOpen);
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("engine " + dir + " is closed");
    }
  }

  /** Enters the read gate, or fails the read because the engine is closing. */
  private void enterRead() {
    if (!reads.enter()) {
      throw new IllegalStateException("engine " + dir + " is closed");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    enterRead();
    try {
      long[] seq = new long[1];
      ReadState rs = acquireReadState(seq);
      try {
        return getFrom(rs, seq[0], key);
      } finally {
        rs.release();
      }
    } finally {
      reads.exit();
    }
  }

  /**
   * The value of {@code key} and the index of the batch that last wrote it (what etcd calls the
   * key's modification revision), or null if the key is absent.
   */
  public VersionedValue getVersioned(byte[] key) {
    enterRead();
    try {
      long[] seq = new long[1];
      ReadState rs = acquireReadState(seq);
      try {
        StoredValue v = find(rs, seq[0], key);
        return v == null || v.isTombstone()
            ? null
            : new VersionedValue(materialize(v), v.sequence());
      } finally {
        rs.release();
      }
    } finally {
      reads.exit();
    }
  }

  /** Point lookup in {@code rs} at {@code sequence}. Precondition: rs is retained. */
  byte[] getFrom(ReadState rs, long sequence, byte[] key) {
    StoredValue v = find(rs, sequence, key);
    return v == null ? null : materialize(v);
  }

  /** The newest version of {@code key}, memtables first, then tables; null if none. */
  private StoredValue find(ReadState rs, long sequence, byte[] key) {
    ensureOpen();
    StoredValue v = rs.getFromMemtables(key, sequence);
    return v != null ? v : tableLookup.get(rs.version(), key, sequence);
  }

  /** The user's value of a found version: null for a tombstone, the blob for a pointer. */
  private byte[] materialize(StoredValue v) {
    if (v.isTombstone()) {
      return null;
    }
    if (v.kind() == ValueKind.BLOB_POINTER) {
      return blobFiles.read(BlobPointer.decode(v.value()), FileReads.Cause.POINT_READ);
    }
    return v.value();
  }

  @Override
  public ScanIterator scan(ScanOptions options) {
    long[] seq = new long[1];
    ReadState rs = acquireReadState(seq);
    return scanFrom(rs, seq[0], options);
  }

  /** Build a scan over {@code rs}; takes over one reference to rs and releases it on close. */
  ScanIterator scanFrom(ReadState rs, long sequence, ScanOptions o) {
    if (closed || !reads.enter()) {
      rs.release();
      throw new IllegalStateException("engine " + dir + " is closed");
    }
    try {
      return scans.build(rs, sequence, o, reads::exit);
    } catch (RuntimeException e) {
      reads.exit();
      throw e;
    }
  }

  @Override
  public long appliedIndex() {
    return memtables.lastApplied();
  }

  /** A consistent view of the current state; close it when done (it pins memtables and files). */
  public Snapshot snapshot() {
    long[] seq = new long[1];
    ReadState rs = acquireReadState(seq);
    openSnapshots.incrementAndGet();
    return new Snapshot(this, rs, seq[0]);
  }

  void snapshotClosed() {
    openSnapshots.decrementAndGet();
  }

  /** The highest index whose batch is durable in this engine's files (-1 if none). */
  public long persistedAppliedIndex() {
    return versions.persistedAppliedIndex();
  }

  /** The highest index applied (durable or still in memory), -1 if none. */
  public long lastAppliedIndex() {
    return memtables.lastApplied();
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction

  /**
   * Flush, then compact every key in {@code [start, end]} (nulls are unbounded) down to the deepest
   * level that holds data, dropping shadowed versions and tombstones on the way. Blocks until done
   * and the files no reader holds any more are deleted; automatic compactions wait meanwhile.
   */
  public void compactRange(byte[] start, byte[] end) {
    flush();
    try {
      scheduler.compactRange(start, end, this::checkWritable);
      obsoleteFiles.awaitIdle();
    } catch (IOException e) {
      background.fail("manual compaction", e);
      throw new EngineException("manual compaction of " + dir + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Compact the whole key space. */
  public void compactRange() {
    compactRange(null, null);
  }

  /**
   * Start no new compaction or blob GC until {@link #resumeCompactions()} (running ones finish).
   * For operators who need the disk for something else for a while, and for tests that build up
   * level 0 on purpose. Write pressure still applies: level 0 grows towards its stop trigger.
   */
  public void pauseCompactions() {
    scheduler.pause();
  }

  public void resumeCompactions() {
    scheduler.resume();
  }

  /** Whether {@link #pauseCompactions()} holds compactions now. */
  public boolean compactionsPaused() {
    return scheduler.paused();
  }

  /** Hold flushes (tests of memtable pressure); sealed memtables queue up meanwhile. */
  void pauseFlushes() {
    memtables.pauseFlushes();
  }

  void resumeFlushes() {
    memtables.resumeFlushes();
  }

  /** Bytes flushes, compactions and blob GC have written so far, counted as they are written. */
  public long backgroundBytesWritten() {
    return ioBudget.totalBytes();
  }

  /**
   * Block until no compaction is running or due and the files they made obsolete are deleted (for
   * tests and the demo).
   */
  public void awaitCompactions() {
    scheduler.awaitIdle();
    try {
      obsoleteFiles.awaitIdle();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Checkpoints, stats, close

  /**
   * Flush, then write into {@code target} (which must not exist or be empty) an openable copy of
   * the engine: hard links to the current tables plus a manifest naming them and the applied index
   * they reflect. Writes may continue meanwhile; they are not in the checkpoint.
   */
  public CheckpointInfo checkpoint(Path target) throws IOException {
    flush();
    return checkpointOfDurable(target);
  }

  /**
   * As {@link #checkpoint} without the flush: the copy holds only what is already durable (the
   * tables flushed so far), so its applied index may be behind this engine's. Never waits for a
   * flush, for callers that must not stall behind one (a full memtable takes a while to write).
   */
  public CheckpointInfo checkpointOfDurable(Path target) throws IOException {
    return new CheckpointWriter(dir, versions).write(target);
  }

  /**
   * Start a flush of what is in memory without waiting for it; nothing to do if a flush is already
   * due (it makes the data sealed before it durable first).
   */
  public void requestFlush() {
    memtables.requestFlush();
  }

  public EngineStats stats() {
    return statsReader.stats();
  }

  /**
   * Flush what is in memory (unless a background failure forbids it), stop background work and
   * release the directory. Snapshots and iterators must be closed first; reads through ones left
   * open fail afterwards.
   */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    IOException failure = null;
    try {
      if (background.healthy()) {
        flush();
      }
    } catch (RuntimeException e) {
      failure =
          new IOException(
              "final flush of "
                  + dir
                  + " failed; data up to index "
                  + versions.persistedAppliedIndex()
                  + " is durable",
              e);
    }
    // Reads in flight finish before their files are released (EngineCloseTest); an iterator left
    // open past the wait fails on its next step instead.
    try {
      if (!reads.closeAndAwait(READ_DRAIN_WAIT)) {
        LOG.warn(
            "closing {} with {} reads still in flight (iterators not closed?)",
            dir,
            reads.inFlight());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // The directory lock is released only once no background thread can still create or delete
    // a file: another engine may open the directory right after.
    scheduler.shutdown();
    closed = true;
    memtables.close();
    obsoleteFiles.close();
    metrics.close();
    tableCache.close();
    blobFiles.close();
    eventLog.close();
    versions.close();
    lock.close();
    if (failure != null) {
      throw failure;
    }
  }
}
