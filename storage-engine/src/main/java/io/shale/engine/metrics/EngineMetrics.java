package io.shale.engine.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The engine's Micrometer meters. Names follow the seed where it names them ({@code
 * lsm.compactions.in_progress}); compaction bytes are split by direction (read, written), kind
 * (key, value, blob), level and reason. Hot-path meters (Bloom checks, tables touched per read) are
 * created once per level, so recording is an increment, never a registry lookup.
 *
 * <p>Gauges read a {@link Source} (the engine), which the registry holds weakly: the engine keeps
 * this object, and the object keeps the source. {@link #close} unregisters them, so an engine
 * reopened on the same registry (a node swapping in an installed snapshot) is the one they read;
 * Micrometer would otherwise keep the first gauge of a name and ignore the new one.
 */
public final class EngineMetrics {
  /** What the gauges read. */
  public interface Source {
    int compactionsInProgress();

    int levelFiles(int level);

    long levelBytes(int level);

    long levelBloomBytes(int level);

    long pendingCompactionBytes();

    long blobLiveBytes();

    long blobDeadBytes();

    int blobFiles();

    long pinnedObsoleteBytes();

    long memtableBytes();

    /** Native bytes of the memtables' chunks: lent to memtables and pooled for the next ones. */
    long memtableNativeBytes();

    /** Native bytes of the open tables' index blocks and Bloom filters. */
    long indexAndFilterBytes();

    int writePressureCondition();

    long blockCacheHits();

    long blockCacheMisses();

    /** Bytes read from files of {@code kind} for {@code cause}, cumulative. */
    long fileReadBytes(
        io.shale.engine.io.FileReads.FileKind kind, io.shale.engine.io.FileReads.Cause cause);
  }

  private final MeterRegistry registry;
  private final Counter[] bloomChecks;
  private final Counter[] bloomUseful;
  private final Counter[] bloomFalsePositives;
  private final DistributionSummary tablesTouched;
  private final Timer writeDelay;
  private final Counter flushes;
  private final Counter flushBytes;
  private final Counter gcRelocatedBytes;
  private final int numLevels;

  /** Held strongly here: registries hold gauges' state weakly. */
  private Source source;

  /** Meters that read {@link #source}; removed at close. */
  private final java.util.List<io.micrometer.core.instrument.Meter> readers =
      new java.util.ArrayList<>();

  public EngineMetrics(MeterRegistry registry, int numLevels) {
    this.registry = registry;
    this.numLevels = numLevels;
    // Registered at start, at 0, for every cause: a query or alert on them answers from the first
    // scrape instead of only after the first refusal.
    for (io.shale.engine.pressure.WritePressure.Cause c :
        io.shale.engine.pressure.WritePressure.Cause.values()) {
      if (c != io.shale.engine.pressure.WritePressure.Cause.NONE) {
        Counter.builder("lsm.write.throttled").tag("cause", c.name()).register(registry);
      }
    }
    bloomChecks = new Counter[numLevels];
    bloomUseful = new Counter[numLevels];
    bloomFalsePositives = new Counter[numLevels];
    for (int l = 0; l < numLevels; l++) {
      Tags level = Tags.of("level", Integer.toString(l));
      bloomChecks[l] =
          Counter.builder("lsm.bloom.checks")
              .tags(level)
              .description("Bloom filter probes by point reads")
              .register(registry);
      bloomUseful[l] =
          Counter.builder("lsm.bloom.useful")
              .tags(level)
              .description("probes where the filter ruled the table out")
              .register(registry);
      bloomFalsePositives[l] =
          Counter.builder("lsm.bloom.false_positives")
              .tags(level)
              .description("probes the filter passed but the table did not hold the key")
              .register(registry);
    }
    tablesTouched =
        DistributionSummary.builder("lsm.read.sstables_touched")
            .description("tables whose data blocks a point read searched (read amplification)")
            .publishPercentileHistogram()
            .serviceLevelObjectives(1, 2, 3, 4, 6, 8, 12, 16)
            .register(registry);
    writeDelay =
        Timer.builder("lsm.write.delay")
            .description("time writes were held back")
            .register(registry);
    flushes = Counter.builder("lsm.flush.count").register(registry);
    flushBytes =
        Counter.builder("lsm.flush.bytes")
            .description("bytes of tables and blob files written by flushes")
            .baseUnit("bytes")
            .register(registry);
    gcRelocatedBytes =
        Counter.builder("lsm.blob.gc.relocated_bytes")
            .baseUnit("bytes")
            .description("live blob bytes rewritten by blob garbage collection")
            .register(registry);
  }

  /**
   * Register the gauges that poll {@code source}. Precondition: called once, when the engine behind
   * the source is fully built (a registry may poll a gauge at once).
   */
  public void bind(Source source) {
    this.source = source;
    for (int l = 0; l < numLevels; l++) {
      Tags level = Tags.of("level", Integer.toString(l));
      int lv = l;
      gauge("lsm.level.files", level, s -> s.levelFiles(lv));
      gauge("lsm.level.bytes", level, s -> s.levelBytes(lv));
      gauge("lsm.bloom.memory.bytes", level, s -> s.levelBloomBytes(lv));
    }
    gauge("lsm.compactions.in_progress", Tags.empty(), s -> s.compactionsInProgress());
    gauge("lsm.compaction.pending_bytes", Tags.empty(), s -> s.pendingCompactionBytes());
    gauge("lsm.blob.live_bytes", Tags.empty(), s -> s.blobLiveBytes());
    gauge("lsm.blob.dead_bytes", Tags.empty(), s -> s.blobDeadBytes());
    gauge("lsm.blob.files", Tags.empty(), s -> s.blobFiles());
    gauge("lsm.pinned_obsolete_bytes", Tags.empty(), s -> s.pinnedObsoleteBytes());
    gauge("lsm.memtable.bytes", Tags.empty(), s -> s.memtableBytes());
    readers.add(
        Gauge.builder("lsm.memtable.native.bytes", source, s -> s.memtableNativeBytes())
            .description(
                "native memory of the memtables' chunks, lent and pooled (bounded by"
                    + " lsm.memtable_size x (1 + lsm.write_pressure.max_immutable_memtables)"
                    + " and their chunks' slack)")
            .baseUnit("bytes")
            .register(registry));
    readers.add(
        Gauge.builder("lsm.index_and_filter.bytes", source, s -> s.indexAndFilterBytes())
            .description(
                "native memory of the open tables' index blocks and Bloom filters"
                    + " (bounded by lsm.index_and_filter_memory)")
            .baseUnit("bytes")
            .register(registry));
    gauge("lsm.write_pressure.condition", Tags.empty(), s -> s.writePressureCondition());
    readers.add(
        FunctionCounter.builder("lsm.block_cache.hits", source, s -> s.blockCacheHits())
            .register(registry));
    readers.add(
        FunctionCounter.builder("lsm.block_cache.misses", source, s -> s.blockCacheMisses())
            .register(registry));
    for (io.shale.engine.io.FileReads.FileKind kind :
        io.shale.engine.io.FileReads.FileKind.values()) {
      for (io.shale.engine.io.FileReads.Cause cause : io.shale.engine.io.FileReads.Cause.values()) {
        readers.add(
            FunctionCounter.builder(
                    "lsm.file.read_bytes", source, s -> s.fileReadBytes(kind, cause))
                .description("bytes read from table and blob files, by why they were read")
                .baseUnit("bytes")
                .tags(
                    "kind",
                    kind.name().toLowerCase(java.util.Locale.ROOT),
                    "cause",
                    cause.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry));
      }
    }
  }

  private void gauge(String name, Tags tags, ToDoubleFunction<Source> f) {
    readers.add(Gauge.builder(name, source, f).tags(tags).register(registry));
  }

  /** Unregisters the meters that read the engine (counters stay: they keep counting across). */
  public void close() {
    readers.forEach(registry::remove);
    readers.clear();
  }

  public MeterRegistry registry() {
    return registry;
  }

  /**
   * The write-pressure thresholds as gauges ({@code lsm.write_pressure.threshold} by kind), so a
   * dashboard or an alert draws L0 files and pending compaction bytes against them.
   */
  public void writePressureThresholds(io.shale.engine.pressure.WritePressureOptions p) {
    threshold("level0_slowdown_files", p.level0SlowdownWritesTrigger());
    threshold("level0_stop_files", p.level0StopWritesTrigger());
    threshold("soft_pending_compaction_bytes", p.softPendingCompactionBytesLimit());
    threshold("hard_pending_compaction_bytes", p.hardPendingCompactionBytesLimit());
  }

  private void threshold(String kind, double value) {
    readers.add(
        Gauge.builder("lsm.write_pressure.threshold", () -> value)
            .tag("kind", kind)
            .register(registry));
  }

  /** One Bloom probe on {@code level}: {@code passed} if the filter said maybe. */
  public void bloomCheck(int level, boolean passed) {
    bloomChecks[level].increment();
    if (!passed) {
      bloomUseful[level].increment();
    }
  }

  /** The filter passed but the table had no version of the key. */
  public void bloomFalsePositive(int level) {
    bloomFalsePositives[level].increment();
  }

  public void tablesTouched(int n) {
    tablesTouched.record(n);
  }

  public void writeDelayed(long nanos) {
    writeDelay.record(nanos, TimeUnit.NANOSECONDS);
  }

  public void writeThrottled(String cause) {
    Counter.builder("lsm.write.throttled").tag("cause", cause).register(registry).increment();
  }

  public void flushed(long bytes) {
    flushes.increment();
    flushBytes.increment(bytes);
  }

  /** Bytes a compaction (or blob GC) moved, by direction and kind. */
  public void compactionBytes(String direction, String kind, int level, String reason, long bytes) {
    if (bytes > 0) {
      Counter.builder("lsm.compaction.bytes")
          .baseUnit("bytes")
          .tags(
              "direction",
              direction,
              "kind",
              kind,
              "level",
              Integer.toString(level),
              "reason",
              reason)
          .register(registry)
          .increment(bytes);
    }
  }

  public void compactionDone(int level, String reason) {
    Counter.builder("lsm.compaction.count")
        .tags("level", Integer.toString(level), "reason", reason)
        .register(registry)
        .increment();
  }

  public void gcRelocated(long bytes) {
    gcRelocatedBytes.increment(bytes);
  }
}
