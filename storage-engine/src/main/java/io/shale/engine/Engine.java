package io.shale.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.compaction.BlobGcJob;
import io.shale.engine.compaction.BlobSeparation;
import io.shale.engine.compaction.Compaction;
import io.shale.engine.compaction.PendingCompactionBytes;
import io.shale.engine.key.ValueKind;
import io.shale.engine.metrics.EngineMetrics;
import io.shale.engine.metrics.EventLog;
import io.shale.engine.pressure.IoBudget;
import io.shale.engine.pressure.WriteController;
import io.shale.engine.pressure.WritePressure;
import io.shale.engine.pressure.WriteThrottledException;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.compaction.CompactionJob;
import io.shale.engine.compaction.CompactionPicker;
import io.shale.engine.compaction.TableOutput;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.iterator.VisibleEntryIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.StoredValue;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The LSM storage engine: one directory, one writer at a time, any number of readers.
 *
 * <p>Durability contract: the engine has no write-ahead log (under Raft, the Raft log is one).
 * Every batch is tagged with a caller-supplied, strictly increasing index; a flush makes every
 * batch up to the flushed memtable's highest index durable and records that index,
 * {@link #persistedAppliedIndex()}, atomically with the new table. After a crash the engine
 * reopens holding exactly the batches up to that index.
 *
 * <p>Thread-safety: all methods are thread-safe. {@link #apply} calls are serialised (one batch
 * at a time); reads never block writes nor each other. Background work runs on one flush thread
 * and {@code [lsm.compaction] threads} compaction threads.
 */
public final class Engine implements ReadView, AutoCloseable {
  private final Path dir;
  private final EngineOptions options;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final BlockCache blockCache;
  private final TableCache tableCache;
  private final VersionSet versions;
  private final CompactionPicker picker;
  private final BlobFiles blobFiles;
  private final WriteController writeController;
  private final IoBudget ioBudget;
  private final EngineMetrics metrics;
  private final EventLog eventLog;
  private final ExecutorService flushExecutor;
  private final ExecutorService compactionExecutor;

  /** Guards the memtables, the read state and the applied index. */
  private final Object writeLock = new Object();
  private Memtable mutable;
  private final ArrayDeque<Memtable> immutables = new ArrayDeque<>(); // oldest first
  private long nextMemtableId;
  private volatile ReadState readState;
  private volatile long lastApplied;

  /** Guards compaction scheduling. */
  private final Object compactionLock = new Object();
  private final Set<Long> busyFiles = new HashSet<>();
  private final List<Compaction> running = new ArrayList<>();
  private boolean manualCompaction;
  private boolean compactionsPaused;
  private volatile boolean flushesPaused;

  private volatile Throwable backgroundError;
  private volatile boolean closing;
  private volatile boolean closed;
  private final AtomicInteger openSnapshots = new AtomicInteger();

  private final AtomicLong flushes = new AtomicLong();
  private final AtomicLong flushBytes = new AtomicLong();
  private final AtomicLong compactions = new AtomicLong();
  private final AtomicLong trivialMoves = new AtomicLong();
  private final AtomicLong compactionBytesRead = new AtomicLong();
  private final AtomicLong compactionBytesWritten = new AtomicLong();
  private final ByteCounter compactionRead = new ByteCounter();
  private final ByteCounter compactionWritten = new ByteCounter();
  private final AtomicLong blobGcRuns = new AtomicLong();
  private final AtomicLong blobGcRelocatedBytes = new AtomicLong();
  private final AtomicLong writeDelayNanos = new AtomicLong();
  private final AtomicLong throttledWrites = new AtomicLong();
  private final java.util.concurrent.atomic.LongAdder[] bloomChecks;
  private final java.util.concurrent.atomic.LongAdder[] bloomUseful;
  private final java.util.concurrent.atomic.LongAdder[] bloomFalsePositives;
  private volatile long pendingCompactionBytes;
  /** Blob GC and compactions alternate when both are due, so neither starves the other. */
  private boolean lastJobWasGc;

  private Engine(Path dir, EngineOptions options, MeterRegistry registry) throws IOException {
    this.dir = dir;
    this.options = options;
    int numLevels = options.compaction().numLevels();
    this.bloomChecks = adders(numLevels);
    this.bloomUseful = adders(numLevels);
    this.bloomFalsePositives = adders(numLevels);
    Files.createDirectories(dir);
    this.lockChannel = FileChannel.open(dir.resolve(FileNames.LOCK), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE);
    FileLock l;
    try {
      l = lockChannel.tryLock();
    } catch (OverlappingFileLockException e) {
      l = null;
    }
    if (l == null) {
      lockChannel.close();
      throw new IllegalStateException("engine directory " + dir + " is in use by another engine");
    }
    this.lock = l;
    try {
      this.blockCache = new BlockCache(options.blockCacheBytes());
      this.tableCache = new TableCache(options.maxOpenFiles(), blockCache,
          n -> FileNames.table(dir, n), options.mmapReads());
      this.blobFiles = new BlobFiles(n -> FileNames.blob(dir, n));
      this.versions = VersionSet.open(dir, numLevels, this::deleteTable, this::deleteBlob);
    } catch (IOException | RuntimeException e) {
      lock.release();
      lockChannel.close();
      throw e;
    }
    this.picker = new CompactionPicker(options.compaction());
    // Nothing below touches the disk but the event log, which never throws.
    this.writeController = new WriteController(options.writePressure());
    this.ioBudget = new IoBudget(options.budget(), java.time.Clock.systemDefaultZone(),
        this::pressureFraction);
    this.eventLog = new EventLog(dir, 16L << 20);
    this.metrics = new EngineMetrics(registry, numLevels, new MetricsSource());
    metrics.writePressureThresholds(options.writePressure());
    this.lastApplied = versions.persistedAppliedIndex();
    this.mutable = new Memtable(nextMemtableId++);
    this.readState = new ReadState(mutable, List.of(), versions.acquireCurrent());
    this.flushExecutor = Executors.newSingleThreadExecutor(r -> daemon(r, "shale-flush"));
    AtomicInteger n = new AtomicInteger();
    this.compactionExecutor = Executors.newFixedThreadPool(options.compaction().threads(),
        r -> daemon(r, "shale-compaction-" + n.incrementAndGet()));
    updatePressure();
    maybeScheduleCompaction();
  }

  private static java.util.concurrent.atomic.LongAdder[] adders(int n) {
    java.util.concurrent.atomic.LongAdder[] a = new java.util.concurrent.atomic.LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new java.util.concurrent.atomic.LongAdder();
    }
    return a;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
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
    checkWritable();
    try {
      long delayed = writeController.admit();
      if (delayed > 0) {
        writeDelayNanos.addAndGet(delayed);
        metrics.writeDelayed(delayed);
      }
    } catch (WriteThrottledException e) {
      throttledWrites.incrementAndGet();
      metrics.writeThrottled(e.pressure().cause().name());
      throw e;
    }
    applyCommitted(batch, index);
  }

  /**
   * Apply a batch that must not be refused: an entry a replicated log has already committed (the
   * Raft leader applied write pressure before the entry entered the log). Never delayed nor
   * refused for pressure; it only waits, as a last bound on memory, while
   * {@code max_immutable_memtables} sealed memtables wait for flush.
   */
  public void applyCommitted(WriteBatch batch, long index) {
    synchronized (writeLock) {
      checkWritable();
      if (index <= lastApplied) {
        throw new IllegalArgumentException("index " + index + " does not increase: the last applied "
            + "index is " + lastApplied);
      }
      if (index > Keys.MAX_SEQUENCE) {
        throw new IllegalArgumentException("index " + index + " exceeds the maximum "
            + Keys.MAX_SEQUENCE);
      }
      while (immutables.size() >= options.maxImmutableMemtables()) {
        try {
          writeLock.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for a flush", e);
        }
        checkWritable();
      }
      for (WriteBatch.Op op : batch.ops()) {
        mutable.add(op.key(), index, op.kind(), op.value());
      }
      mutable.markApplied(index);
      lastApplied = index;
      if (mutable.approximateBytes() >= options.memtableSizeBytes()) {
        sealMutable();
      }
    }
  }

  /** The current write pressure (recomputed after every flush, compaction and memtable seal). */
  public WritePressure writePressure() {
    return writeController.current();
  }

  /** Be told whenever the write pressure changes (condition, cause or delay). */
  public void addWritePressureListener(java.util.function.Consumer<WritePressure> listener) {
    writeController.addListener(listener);
  }

  public void removeWritePressureListener(java.util.function.Consumer<WritePressure> listener) {
    writeController.removeListener(listener);
  }

  /**
   * Recompute write pressure from the current state. Under writeLock, so that two updaters
   * (the writer sealing a memtable, a background thread installing a version) cannot store their
   * results out of order: the last stored pressure is always computed from the latest state.
   */
  private void updatePressure() {
    synchronized (writeLock) {
      Version v = versions.current();
      long pending = PendingCompactionBytes.estimate(v, options.compaction());
      pendingCompactionBytes = pending;
      writeController.update(v.files(0).size(), pending, immutables.size());
    }
  }

  /** How far the state is towards a slowdown threshold, for the I/O budget's relaxation. */
  private double pressureFraction() {
    var w = options.writePressure();
    Version v = versions.current();
    return Math.max((double) v.files(0).size() / w.level0SlowdownWritesTrigger(),
        (double) pendingCompactionBytes / w.softPendingCompactionBytesLimit());
  }

  private void checkWritable() {
    if (closed || closing) {
      throw new IllegalStateException("engine " + dir + " is closed");
    }
    Throwable e = backgroundError;
    if (e != null) {
      throw new EngineException("engine " + dir + " accepts no writes after a background failure: "
          + e, e);
    }
  }

  /** Precondition: holds writeLock. */
  private void sealMutable() {
    immutables.addLast(mutable);
    mutable = new Memtable(nextMemtableId++);
    installReadState();
    updatePressure();
    flushExecutor.execute(this::flushOldest);
  }

  /** Publish a read state built from the current memtables and version. Holds writeLock. */
  private void installReadState() {
    List<Memtable> newestFirst = new ArrayList<>(immutables);
    java.util.Collections.reverse(newestFirst);
    ReadState old = readState;
    readState = new ReadState(mutable, newestFirst, versions.acquireCurrent());
    old.release();
  }

  private void flushOldest() {
    Memtable m;
    synchronized (writeLock) {
      while (flushesPaused && !closing) {
        try {
          writeLock.wait(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      m = immutables.peekFirst();
    }
    if (m == null || backgroundError != null) {
      return;
    }
    long started = System.nanoTime();
    try {
      List<VersionEdit.Added> added = new ArrayList<>();
      List<BlobFileMeta> blobs = List.of();
      if (!m.isEmpty()) {
        TableOutput out = new TableOutput(versions::newFileNumber, n -> FileNames.table(dir, n),
            options.table(), 0, options.bloom().bitsPerKey(0), Long.MAX_VALUE, ioBudget::record);
        BlobSeparation separation = options.blob().enabled()
            ? new BlobSeparation(options.blob(), versions::newFileNumber,
                n -> FileNames.blob(dir, n), ioBudget::record)
            : null;
        TableOutput.Result r;
        try (InternalIterator it = m.iterator(Direction.FORWARD)) {
          r = out.write(it, k -> false, separation, () -> false);
          blobs = separation == null ? List.of() : separation.finish();
        } catch (IOException | RuntimeException e) {
          if (separation != null) {
            separation.abandon();
          }
          throw e;
        }
        long bytes = 0;
        for (FileMetadata f : r.files()) {
          added.add(new VersionEdit.Added(0, f));
          bytes += f.size();
        }
        for (BlobFileMeta b : blobs) {
          bytes += b.fileSize();
        }
        flushBytes.addAndGet(bytes);
        metrics.flushed(bytes);
        DurableFiles.syncDirectory(dir);
      }
      versions.logAndApply(new VersionEdit(added, List.of(), m.largestSequence(), -1)
          .withBlobs(blobs, List.of(), List.of()));
      flushes.incrementAndGet();
      synchronized (writeLock) {
        immutables.removeFirst();
        installReadState();
        updatePressure(); // before waking flush(): its caller sees the pressure of the new state
        writeLock.notifyAll();
      }
      logFlush(m, added, blobs, System.nanoTime() - started);
      maybeScheduleCompaction();
    } catch (IOException | RuntimeException e) {
      failBackground("flush of memtable " + m.id(), e);
    }
  }

  private void failBackground(String what, Throwable e) {
    if (backgroundError == null && !closing) {
      backgroundError = new IOException(what + " failed: " + e.getMessage(), e);
    }
    synchronized (writeLock) {
      writeLock.notifyAll();
    }
  }

  /**
   * Make every batch applied so far durable: seal the memtable and wait until every sealed
   * memtable is flushed. Returns the new {@link #persistedAppliedIndex()}.
   */
  public long flush() {
    synchronized (writeLock) {
      checkWritable();
      if (!mutable.isEmpty() || mutable.largestSequence() > versions.persistedAppliedIndex()) {
        sealMutable();
      }
      while (!immutables.isEmpty()) {
        checkWritable();
        try {
          writeLock.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for a flush", e);
        }
      }
      checkWritable();
    }
    return versions.persistedAppliedIndex();
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  /**
   * A retained read state and the sequence to read it at. Re-reading the state after the index
   * proves that no memtable switch or version install happened in between, so every batch up to
   * the index is in this state and no table in it holds a newer one.
   */
  private ReadState acquireReadState(long[] sequenceOut) {
    while (true) {
      ensureOpen();
      ReadState rs = readState;
      long seq = lastApplied;
      if (readState == rs && rs.tryRetain()) {
        sequenceOut[0] = seq;
        return rs;
      }
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("engine " + dir + " is closed");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    long[] seq = new long[1];
    ReadState rs = acquireReadState(seq);
    try {
      return getFrom(rs, seq[0], key);
    } finally {
      rs.release();
    }
  }

  /**
   * The value of {@code key} and the index of the batch that last wrote it (what etcd calls the
   * key's modification revision), or null if the key is absent.
   */
  public VersionedValue getVersioned(byte[] key) {
    long[] seq = new long[1];
    ReadState rs = acquireReadState(seq);
    try {
      StoredValue v = findFrom(rs, seq[0], key);
      return v == null || v.isTombstone() ? null
          : new VersionedValue(materialize(v), v.sequence());
    } finally {
      rs.release();
    }
  }

  /** Point lookup in {@code rs} at {@code sequence}. Precondition: rs is retained. */
  byte[] getFrom(ReadState rs, long sequence, byte[] key) {
    StoredValue v = findFrom(rs, sequence, key);
    return v == null ? null : materialize(v);
  }

  /**
   * The newest version of {@code key} at {@code sequence}, tombstones included, values not yet
   * resolved from blob files; null if no version exists. Precondition: rs is retained.
   */
  private StoredValue findFrom(ReadState rs, long sequence, byte[] key) {
    ensureOpen();
    StoredValue v = rs.mutable.get(key, sequence);
    if (v == null) {
      for (Memtable m : rs.immutablesNewestFirst) {
        v = m.get(key, sequence);
        if (v != null) {
          break;
        }
      }
    }
    if (v != null) {
      // Memtable values are shared with the memtable: callers get their own copy.
      return v.isTombstone() ? v : new StoredValue(v.kind(), v.value().clone(), v.sequence());
    }
    Version version = rs.version;
    int[] touched = new int[1];
    try {
      for (FileMetadata f : version.files(0)) {
        if (f.overlaps(key, key)) {
          v = lookup(0, f, key, sequence, touched);
          if (v != null) {
            return v;
          }
        }
      }
      for (int level = 1; level < version.numLevels(); level++) {
        FileMetadata f = version.fileFor(level, key);
        if (f != null) {
          v = lookup(level, f, key, sequence, touched);
          if (v != null) {
            return v;
          }
        }
      }
      return null;
    } finally {
      metrics.tablesTouched(touched[0]);
    }
  }

  /** The user's value of a found version: null for a tombstone, the blob for a pointer. */
  private byte[] materialize(StoredValue v) {
    if (v.isTombstone()) {
      return null;
    }
    if (v.kind() == ValueKind.BLOB_POINTER) {
      return blobFiles.read(BlobPointer.decode(v.value()));
    }
    return v.value();
  }

  private StoredValue lookup(int level, FileMetadata f, byte[] key, long sequence, int[] touched) {
    TableReader r;
    try {
      r = tableCache.acquire(f.number());
    } catch (IOException e) {
      throw new UncheckedIOException("opening table " + f.number() + " in " + dir, e);
    }
    try {
      boolean maybe = r.mayContain(key);
      bloomChecks[level].increment();
      metrics.bloomCheck(level, maybe);
      if (!maybe) {
        bloomUseful[level].increment();
        return null;
      }
      touched[0]++;
      StoredValue v = r.get(key, sequence);
      if (v == null) {
        bloomFalsePositives[level].increment();
        metrics.bloomFalsePositive(level);
      }
      return v;
    } finally {
      r.release();
    }
  }

  @Override
  public ScanIterator scan(ScanOptions options) {
    long[] seq = new long[1];
    ReadState rs = acquireReadState(seq);
    return scanFrom(rs, seq[0], options);
  }

  /** Build a scan over {@code rs}; takes over one reference to rs and releases it on close. */
  ScanIterator scanFrom(ReadState rs, long sequence, ScanOptions o) {
    if (closed) {
      rs.release();
      throw new IllegalStateException("engine " + dir + " is closed");
    }
    Direction d = o.reverse() ? Direction.REVERSE : Direction.FORWARD;
    List<InternalIterator> sources = new ArrayList<>();
    List<TableReader> readers = new ArrayList<>();
    try {
      sources.add(rs.mutable.iterator(d));
      for (Memtable m : rs.immutablesNewestFirst) {
        sources.add(m.iterator(d));
      }
      for (FileMetadata f : rs.version.files(0)) {
        if (f.overlaps(o.start(), o.end())) {
          TableReader r = tableCache.acquire(f.number());
          readers.add(r);
          sources.add(r.iterator(d));
        }
      }
      for (int level = 1; level < rs.version.numLevels(); level++) {
        List<FileMetadata> files = rs.version.overlapping(level, o.start(), o.end());
        if (!files.isEmpty()) {
          sources.add(new LevelIterator(files, tableCache, d));
        }
      }
    } catch (IOException | RuntimeException e) {
      sources.forEach(InternalIterator::close);
      readers.forEach(TableReader::release);
      rs.release();
      if (e instanceof IOException io) {
        throw new UncheckedIOException("opening tables for a scan in " + dir, io);
      }
      throw (RuntimeException) e;
    }
    VisibleEntryIterator visible = new VisibleEntryIterator(new MergingIterator(sources, d), d,
        o.start(), o.end(), sequence, o.limit(), o.keysOnly());
    return new ScanIterator(visible, blobFiles, options.blob().scanReadaheadBytes(), () -> {
      readers.forEach(TableReader::release);
      rs.release();
    });
  }

  @Override
  public long appliedIndex() {
    return lastApplied;
  }

  /**
   * A consistent view of the current state; close it when done (it pins memtables and files).
   */
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
    return lastApplied;
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction

  private void maybeScheduleCompaction() {
    synchronized (compactionLock) {
      while (!closing && !manualCompaction && !compactionsPaused && backgroundError == null
          && running.size() < options.compaction().threads()) {
        Version v = versions.acquireCurrent();
        long now = System.currentTimeMillis();
        Compaction c = picker.pick(v, busyFiles, running, now);
        BlobGcJob.Plan gc = options.blob().enabled()
            ? BlobGcJob.pick(v, options.blob().gcThresholdRatio(), busyFiles) : null;
        // GC goes first unless a compaction is also due and GC ran last: alternating bounds the
        // wait of either kind to one job of the other.
        if (gc != null && (c == null || !lastJobWasGc)) {
          lastJobWasGc = true;
          Compaction marker = gcMarker(gc);
          markRunning(marker);
          busyFiles.add(gc.file().number());
          try {
            compactionExecutor.execute(() -> runBlobGc(gc, marker, v));
          } catch (java.util.concurrent.RejectedExecutionException closingNow) {
            busyFiles.remove(gc.file().number());
            running.remove(marker);
            marker.allInputs().forEach(f -> busyFiles.remove(f.number()));
            v.release();
            return;
          }
          continue;
        }
        if (c == null) {
          v.release();
          return;
        }
        lastJobWasGc = false;
        markRunning(c);
        try {
          compactionExecutor.execute(() -> runCompaction(c, v));
        } catch (java.util.concurrent.RejectedExecutionException closingNow) {
          running.remove(c);
          c.allInputs().forEach(f -> busyFiles.remove(f.number()));
          v.release();
          return;
        }
      }
    }
  }

  /** GC holds its tables like a compaction of their levels into themselves. */
  private static Compaction gcMarker(BlobGcJob.Plan gc) {
    return new Compaction(-1, -1, gc.allTables(), List.of(), 0,
        io.shale.engine.compaction.CompactionReason.BLOB_GC);
  }

  private void runBlobGc(BlobGcJob.Plan plan, Compaction marker, Version v) {
    long started = System.nanoTime();
    try {
      BlobGcJob.Outcome o = new BlobGcJob(plan, tableCache, blobFiles, versions::newFileNumber,
          n -> FileNames.table(dir, n), n -> FileNames.blob(dir, n), options.table(),
          options.bloom()::bitsPerKey, options.compaction()::targetBytesPerFile,
          ioBudget::acquire, () -> closing).run();
      DurableFiles.syncDirectory(dir);
      versions.logAndApply(o.edit());
      synchronized (writeLock) {
        installReadState();
      }
      blobGcRuns.incrementAndGet();
      blobGcRelocatedBytes.addAndGet(o.relocatedBytes());
      metrics.gcRelocated(o.relocatedBytes());
      metrics.compactionDone(-1, "blob_gc");
      compactionBytes(plan.allTables(), o.outputs(), -1, "blob_gc", o.relocatedBytes());
      updatePressure();
      logBlobGc(o, System.nanoTime() - started);
    } catch (IOException | RuntimeException e) {
      if (!closing) {
        failBackground("garbage collection of blob file " + plan.file().number(), e);
      }
    } finally {
      v.release();
      synchronized (compactionLock) {
        busyFiles.remove(plan.file().number());
      }
      markDone(marker);
    }
    maybeScheduleCompaction();
  }

  /** Precondition: holds compactionLock. */
  private void markRunning(Compaction c) {
    running.add(c);
    for (FileMetadata f : c.allInputs()) {
      busyFiles.add(f.number());
    }
  }

  private void markDone(Compaction c) {
    synchronized (compactionLock) {
      running.remove(c);
      for (FileMetadata f : c.allInputs()) {
        busyFiles.remove(f.number());
      }
      compactionLock.notifyAll();
    }
  }

  private void runCompaction(Compaction c, Version v) {
    try {
      executeCompaction(c, v);
    } catch (IOException | RuntimeException e) {
      if (!closing) {
        failBackground("compaction of level " + c.level() + " into " + c.outputLevel(), e);
      }
    } finally {
      v.release();
      markDone(c);
    }
    maybeScheduleCompaction();
  }

  private void executeCompaction(Compaction c, Version v) throws IOException {
    long started = System.nanoTime();
    int out = c.outputLevel();
    TableOutput output = new TableOutput(versions::newFileNumber, n -> FileNames.table(dir, n),
        options.table(), out, options.bloom().bitsPerKey(out),
        options.compaction().targetFileSizeBytes(), ioBudget::acquire);
    CompactionJob.Outcome o = new CompactionJob(c, v, tableCache, output, () -> closing,
        n -> { }).run();
    if (!o.trivialMove()) {
      DurableFiles.syncDirectory(dir);
    }
    versions.logAndApply(o.edit());
    synchronized (writeLock) {
      installReadState();
    }
    compactions.incrementAndGet();
    if (o.trivialMove()) {
      trivialMoves.incrementAndGet();
    } else {
      compactionBytes(c.allInputs(), o.outputs(), c.level(), c.reason().name().toLowerCase(), 0);
    }
    compactionBytesRead.addAndGet(o.bytesRead());
    compactionBytesWritten.addAndGet(o.bytesWritten());
    metrics.compactionDone(c.level(), c.reason().name().toLowerCase());
    updatePressure();
    logCompaction(o, System.nanoTime() - started);
  }

  /**
   * Account the key, inline-value and blob bytes a compaction read and wrote, from the files'
   * properties. Compactions move pointers, so their blob bytes are 0; blob GC's are what it
   * relocated.
   */
  private void compactionBytes(List<FileMetadata> in, List<FileMetadata> outFiles, int level,
      String reason, long blobBytes) {
    long keyIn = 0;
    long valueIn = 0;
    for (FileMetadata f : in) {
      keyIn += f.properties().rawKeyBytes();
      valueIn += f.properties().rawValueBytes();
    }
    long keyOut = 0;
    long valueOut = 0;
    for (FileMetadata f : outFiles) {
      keyOut += f.properties().rawKeyBytes();
      valueOut += f.properties().rawValueBytes();
    }
    compactionRead.add(keyIn, valueIn, blobBytes);
    compactionWritten.add(keyOut, valueOut, blobBytes);
    metrics.compactionBytes("read", "key", level, reason, keyIn);
    metrics.compactionBytes("read", "value", level, reason, valueIn);
    metrics.compactionBytes("read", "blob", level, reason, blobBytes);
    metrics.compactionBytes("written", "key", level, reason, keyOut);
    metrics.compactionBytes("written", "value", level, reason, valueOut);
    metrics.compactionBytes("written", "blob", level, reason, blobBytes);
  }

  private static String filesJson(List<FileMetadata> files) {
    StringBuilder b = new StringBuilder("[");
    for (FileMetadata f : files) {
      if (b.length() > 1) {
        b.append(',');
      }
      var p = f.properties();
      b.append("{\"file\":").append(f.number()).append(",\"bytes\":").append(f.size())
          .append(",\"entries\":").append(p.entries()).append(",\"tombstones\":")
          .append(p.tombstones()).append(",\"key_bytes\":").append(p.rawKeyBytes())
          .append(",\"value_bytes\":").append(p.rawValueBytes()).append(",\"blob_bytes\":")
          .append(p.blobBytes()).append('}');
    }
    return b.append(']').toString();
  }

  private static String blobsJson(List<BlobFileMeta> blobs) {
    StringBuilder b = new StringBuilder("[");
    for (BlobFileMeta m : blobs) {
      if (b.length() > 1) {
        b.append(',');
      }
      b.append("{\"blob_file\":").append(m.number()).append(",\"bytes\":").append(m.fileSize())
          .append(",\"values\":").append(m.totalCount()).append(",\"value_bytes\":")
          .append(m.totalBytes()).append('}');
    }
    return b.append(']').toString();
  }

  private void logFlush(Memtable m, List<VersionEdit.Added> added, List<BlobFileMeta> blobs,
      long nanos) {
    List<FileMetadata> files = new ArrayList<>();
    added.forEach(a -> files.add(a.file()));
    eventLog.append("\"event\":\"flush\",\"memtable\":" + m.id() + ",\"entries\":"
        + m.entryCount() + ",\"applied_index\":" + m.largestSequence() + ",\"outputs\":"
        + filesJson(files) + ",\"blob_outputs\":" + blobsJson(blobs) + ",\"duration_ms\":"
        + nanos / 1_000_000);
  }

  private void logCompaction(CompactionJob.Outcome o, long nanos) {
    Compaction c = o.compaction();
    eventLog.append("\"event\":\"compaction\",\"reason\":"
        + EventLog.quote(c.reason().name().toLowerCase()) + ",\"score\":"
        + String.format(java.util.Locale.ROOT, "%.4f", c.score()) + ",\"level\":" + c.level()
        + ",\"output_level\":" + c.outputLevel() + ",\"trivial_move\":" + o.trivialMove()
        + ",\"inputs\":" + filesJson(c.inputs()) + ",\"output_level_inputs\":"
        + filesJson(c.outputLevelInputs()) + ",\"outputs\":" + filesJson(o.outputs())
        + ",\"entries_dropped\":" + o.entriesDropped() + ",\"duration_ms\":" + nanos / 1_000_000);
  }

  private void logBlobGc(BlobGcJob.Outcome o, long nanos) {
    BlobFileMeta b = o.plan().file();
    eventLog.append("\"event\":\"blob_gc\",\"reason\":\"blob_gc\",\"blob_file\":" + b.number()
        + ",\"garbage_ratio\":" + String.format(java.util.Locale.ROOT, "%.4f", b.garbageRatio())
        + ",\"dead_bytes\":" + b.garbageBytes() + ",\"relocated_bytes\":" + o.relocatedBytes()
        + ",\"inputs\":" + filesJson(o.plan().allTables()) + ",\"outputs\":"
        + filesJson(o.outputs()) + ",\"blob_outputs\":" + blobsJson(o.newBlobFiles())
        + ",\"duration_ms\":" + nanos / 1_000_000);
  }

  /**
   * Flush, then compact every key in {@code [start, end]} (nulls are unbounded) down to the
   * deepest level that holds data, dropping shadowed versions and tombstones on the way. Blocks
   * until done; automatic compactions wait meanwhile.
   */
  public void compactRange(byte[] start, byte[] end) {
    flush();
    synchronized (compactionLock) {
      while (manualCompaction) {
        waitOn(compactionLock);
      }
      manualCompaction = true;
      while (!running.isEmpty()) {
        waitOn(compactionLock);
      }
    }
    try {
      Version first = versions.current();
      int bottom = Math.max(1, first.deepestNonEmptyLevel());
      for (int level = 0; level < bottom; level++) {
        checkWritable();
        Version v = versions.acquireCurrent();
        Compaction c = picker.manual(v, level, start, end);
        if (c == null) {
          v.release();
          continue;
        }
        synchronized (compactionLock) {
          markRunning(c);
        }
        try {
          executeCompaction(c, v);
        } finally {
          v.release();
          markDone(c);
        }
      }
    } catch (IOException e) {
      failBackground("manual compaction", e);
      throw new EngineException("manual compaction of " + dir + " failed", e);
    } finally {
      synchronized (compactionLock) {
        manualCompaction = false;
        compactionLock.notifyAll();
      }
      maybeScheduleCompaction();
    }
  }

  /**
   * Start no new compaction or blob GC until {@link #resumeCompactions()} (running ones finish).
   * For operators who need the disk for something else for a while, and for tests that build up
   * level 0 on purpose. Write pressure still applies: level 0 grows towards its stop trigger.
   */
  public void pauseCompactions() {
    synchronized (compactionLock) {
      compactionsPaused = true;
    }
  }

  public void resumeCompactions() {
    synchronized (compactionLock) {
      compactionsPaused = false;
    }
    maybeScheduleCompaction();
  }

  /** Whether {@link #pauseCompactions()} holds compactions now. */
  public boolean compactionsPaused() {
    synchronized (compactionLock) {
      return compactionsPaused;
    }
  }

  /** Hold flushes (tests of memtable pressure); sealed memtables queue up meanwhile. */
  void pauseFlushes() {
    flushesPaused = true;
  }

  void resumeFlushes() {
    flushesPaused = false;
    synchronized (writeLock) {
      writeLock.notifyAll();
    }
  }

  /** Bytes flushes, compactions and blob GC have written so far, counted as they are written. */
  public long backgroundBytesWritten() {
    return ioBudget.totalBytes();
  }

  /** Compact the whole key space. */
  public void compactRange() {
    compactRange(null, null);
  }

  private static void waitOn(Object monitor) {
    try {
      monitor.wait(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for compactions", e);
    }
  }

  /** Block until no compaction is running or due (for tests and the demo). */
  public void awaitCompactions() {
    while (true) {
      synchronized (compactionLock) {
        if (running.isEmpty() && !manualCompaction) {
          Version v = versions.current();
          boolean gcDue = options.blob().enabled()
              && BlobGcJob.pick(v, options.blob().gcThresholdRatio(), busyFiles) != null;
          if (backgroundError != null || closing || compactionsPaused
              || (!gcDue && picker.pick(v, busyFiles, running, System.currentTimeMillis()) == null)) {
            return;
          }
        }
        waitOn(compactionLock);
      }
      maybeScheduleCompaction();
    }
  }

  /**
   * Whether obsolete files may still be deleted: not once the engine is closed. A scan or
   * snapshot left open then releases its tables later, when the directory may hold another
   * engine's files under the same numbers (a node swaps a fetched checkpoint in for its engine
   * directory); what is left behind is removed by the next open, which deletes unlisted files.
   */
  private boolean mayDeleteFiles() {
    return !closed;
  }

  private void deleteBlob(long number) {
    if (!mayDeleteFiles()) {
      return;
    }
    blobFiles.evict(number);
    try {
      Files.deleteIfExists(FileNames.blob(dir, number));
    } catch (IOException e) {
      System.err.println("shale: could not delete obsolete blob file " + number + " in " + dir + ": " + e);
    }
  }

  private void deleteTable(long number) {
    if (!mayDeleteFiles()) {
      return;
    }
    tableCache.evict(number);
    try {
      Files.deleteIfExists(FileNames.table(dir, number));
    } catch (IOException e) {
      // Left behind; the next open removes tables no version lists.
      System.err.println("shale: could not delete obsolete table " + number + " in " + dir + ": " + e);
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
    if (Files.exists(target)) {
      try (var s = Files.list(target)) {
        if (s.findAny().isPresent()) {
          throw new IllegalArgumentException("checkpoint directory " + target + " is not empty");
        }
      }
    }
    Files.createDirectories(target);
    VersionSet.Pinned pinned = versions.pinCurrent();
    try {
      List<String> names = new ArrayList<>();
      long bytes = 0;
      for (FileMetadata f : pinned.version().allFiles()) {
        String name = FileNames.tableName(f.number());
        Files.createLink(target.resolve(name), dir.resolve(name));
        names.add(name);
        bytes += f.size();
      }
      for (BlobFileMeta b : pinned.version().blobFiles().values()) {
        String name = FileNames.blobName(b.number());
        Files.createLink(target.resolve(name), dir.resolve(name));
        names.add(name);
        bytes += b.fileSize();
      }
      VersionSet.writeStandaloneManifest(target, pinned.version(), pinned.appliedIndex(),
          pinned.nextFileNumber());
      DurableFiles.syncDirectory(target);
      return new CheckpointInfo(target, pinned.appliedIndex(), names, bytes);
    } finally {
      pinned.version().release();
    }
  }

  /** Key, value and blob byte counters; thread-safe. */
  private static final class ByteCounter {
    private final AtomicLong key = new AtomicLong();
    private final AtomicLong value = new AtomicLong();
    private final AtomicLong blob = new AtomicLong();

    void add(long k, long v, long b) {
      key.addAndGet(k);
      value.addAndGet(v);
      blob.addAndGet(b);
    }

    EngineStats.ByteSplit snapshot() {
      return new EngineStats.ByteSplit(key.get(), value.get(), blob.get());
    }
  }

  public EngineStats stats() {
    Version v = versions.acquireCurrent();
    try {
      List<EngineStats.LevelStats> levels = new ArrayList<>();
      for (int l = 0; l < v.numLevels(); l++) {
        long bytes = 0;
        long entries = 0;
        long tombstones = 0;
        long bloom = 0;
        long blob = 0;
        for (FileMetadata f : v.files(l)) {
          bytes += f.size();
          entries += f.properties().entries();
          tombstones += f.properties().tombstones();
          bloom += f.properties().filterBytes();
          blob += f.properties().blobBytes();
        }
        levels.add(new EngineStats.LevelStats(l, v.files(l).size(), bytes, entries, tombstones,
            bloom, options.bloom().bitsPerKey(l),
            l == 0 ? 0 : options.compaction().targetBytes(l), picker.sizePressure(v, l), blob,
            bloomChecks[l].sum(), bloomUseful[l].sum(), bloomFalsePositives[l].sum()));
      }
      List<EngineStats.BlobFileStats> blobs = new ArrayList<>();
      for (BlobFileMeta b : v.blobFiles().values()) {
        blobs.add(new EngineStats.BlobFileStats(b.number(), b.fileSize(), b.totalBytes(),
            b.liveBytes(), b.garbageBytes(), b.garbageRatio()));
      }
      long memBytes;
      int imm;
      synchronized (writeLock) {
        memBytes = mutable.approximateBytes();
        imm = immutables.size();
        for (Memtable m : immutables) {
          memBytes += m.approximateBytes();
        }
      }
      return new EngineStats(lastApplied, versions.persistedAppliedIndex(), memBytes, imm,
          List.copyOf(levels), flushes.get(), flushBytes.get(), compactions.get(),
          trivialMoves.get(), compactionBytesRead.get(), compactionBytesWritten.get(),
          compactionRead.snapshot(), compactionWritten.snapshot(), pendingCompactionBytes,
          writeController.current(), writeDelayNanos.get(), throttledWrites.get(),
          List.copyOf(blobs), blobGcRuns.get(), blobGcRelocatedBytes.get(),
          versions.pinnedObsoleteBytes(), blockCache.usedBytes(), blockCache.hits(),
          blockCache.misses(), openSnapshots.get(), runningCompactions());
    } finally {
      v.release();
    }
  }

  private int runningCompactions() {
    synchronized (compactionLock) {
      return running.size();
    }
  }

  /** What the meters read; kept strongly by the engine (registries hold gauges' state weakly). */
  private final class MetricsSource implements EngineMetrics.Source {
    @Override
    public int compactionsInProgress() {
      return runningCompactions();
    }

    @Override
    public int levelFiles(int level) {
      return versions.current().files(level).size();
    }

    @Override
    public long levelBytes(int level) {
      return versions.current().levelBytes(level);
    }

    @Override
    public long levelBloomBytes(int level) {
      long sum = 0;
      for (FileMetadata f : versions.current().files(level)) {
        sum += f.properties().filterBytes();
      }
      return sum;
    }

    @Override
    public long pendingCompactionBytes() {
      return pendingCompactionBytes;
    }

    @Override
    public long blobLiveBytes() {
      return versions.current().blobFiles().values().stream().mapToLong(BlobFileMeta::liveBytes).sum();
    }

    @Override
    public long blobDeadBytes() {
      return versions.current().blobFiles().values().stream()
          .mapToLong(BlobFileMeta::garbageBytes).sum();
    }

    @Override
    public int blobFiles() {
      return versions.current().blobFiles().size();
    }

    @Override
    public long pinnedObsoleteBytes() {
      return versions.pinnedObsoleteBytes();
    }

    @Override
    public long memtableBytes() {
      return mutable.approximateBytes();
    }

    @Override
    public int writePressureCondition() {
      return writeController.current().condition().ordinal();
    }

    @Override
    public long blockCacheHits() {
      return blockCache.hits();
    }

    @Override
    public long blockCacheMisses() {
      return blockCache.misses();
    }
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
      if (backgroundError == null && !closing) {
        flush();
      }
    } catch (RuntimeException e) {
      failure = new IOException("final flush of " + dir + " failed; data up to index "
          + versions.persistedAppliedIndex() + " is durable", e);
    }
    synchronized (compactionLock) {
      closing = true;
    }
    flushExecutor.shutdown();
    compactionExecutor.shutdown();
    // The directory lock is released only once no background thread can still create or delete
    // a file: another engine may open the directory right after. Running jobs stop at their next
    // key (they poll `closing`); after a minute they are interrupted, and close waits on.
    boolean interrupted = false;
    for (ExecutorService ex : List.of(flushExecutor, compactionExecutor)) {
      try {
        if (!ex.awaitTermination(1, TimeUnit.MINUTES)) {
          ex.shutdownNow();
          while (!ex.awaitTermination(10, TimeUnit.SECONDS)) {
            System.err.println("shale: still waiting for background work to stop in " + dir);
          }
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    closed = true;
    metrics.close();
    tableCache.close();
    blobFiles.close();
    eventLog.close();
    versions.close();
    lock.release();
    lockChannel.close();
    if (failure != null) {
      throw failure;
    }
  }
}
