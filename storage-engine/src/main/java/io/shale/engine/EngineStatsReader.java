package io.shale.engine;

import io.shale.engine.compaction.BackgroundScheduler;
import io.shale.engine.compaction.CompactionPicker;
import io.shale.engine.io.FileReads;
import io.shale.engine.memtable.MemtableList;
import io.shale.engine.metrics.EngineCounters;
import io.shale.engine.metrics.EngineMetrics;
import io.shale.engine.pressure.WriteController;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * Reads an engine's current numbers: the {@link EngineStats} snapshot of {@code Engine.stats()},
 * and the values the Micrometer gauges poll ({@link EngineMetrics.Source}). Counts come from {@link
 * EngineCounters}; sizes from the current version. Kept strongly by the engine, since registries
 * hold gauges' state weakly.
 */
final class EngineStatsReader implements EngineMetrics.Source {
  private final EngineOptions options;
  private final VersionSet versions;
  private final MemtableList memtables;
  private final CompactionPicker picker;
  private final EngineCounters counters;
  private final PressureTracker pressure;
  private final WriteController writeController;
  private final BlockCache blockCache;
  private final java.util.function.LongSupplier tableReaderMemory;
  private final BackgroundScheduler scheduler;
  private final IntSupplier openSnapshots;

  private final FileReads fileReads;

  EngineStatsReader(
      EngineOptions options,
      VersionSet versions,
      MemtableList memtables,
      CompactionPicker picker,
      EngineCounters counters,
      PressureTracker pressure,
      WriteController writeController,
      BlockCache blockCache,
      java.util.function.LongSupplier tableReaderMemory,
      BackgroundScheduler scheduler,
      IntSupplier openSnapshots,
      FileReads fileReads) {
    this.fileReads = fileReads;
    this.tableReaderMemory = tableReaderMemory;
    this.options = options;
    this.versions = versions;
    this.memtables = memtables;
    this.picker = picker;
    this.counters = counters;
    this.pressure = pressure;
    this.writeController = writeController;
    this.blockCache = blockCache;
    this.scheduler = scheduler;
    this.openSnapshots = openSnapshots;
  }

  EngineStats stats() {
    Version v = versions.acquireCurrent();
    try {
      List<EngineStats.LevelStats> levels = new ArrayList<>();
      for (int l = 0; l < v.numLevels(); l++) {
        levels.add(levelStats(v, l));
      }
      List<EngineStats.BlobFileStats> blobs = new ArrayList<>();
      for (BlobFileMeta b : v.blobFiles().values()) {
        blobs.add(
            new EngineStats.BlobFileStats(
                b.number(),
                b.fileSize(),
                b.totalBytes(),
                b.liveBytes(),
                b.garbageBytes(),
                b.garbageRatio()));
      }
      MemtableList.Usage mem = memtables.usage();
      return new EngineStats(
          memtables.lastApplied(),
          versions.persistedAppliedIndex(),
          mem.bytes(),
          mem.immutables(),
          List.copyOf(levels),
          counters.flushes(),
          counters.flushBytes(),
          counters.compactions(),
          counters.trivialMoves(),
          counters.compactionBytesRead(),
          counters.compactionBytesWritten(),
          split(counters.compactionRead()),
          split(counters.compactionWritten()),
          pressure.pendingCompactionBytes(),
          writeController.current(),
          counters.writeDelayNanos(),
          counters.throttledWrites(),
          List.copyOf(blobs),
          counters.blobGcRuns(),
          counters.blobGcRelocatedBytes(),
          counters.blobGcBytesWritten(),
          counters.blobBytesReclaimed(),
          versions.pinnedObsoleteBytes(),
          tableReaderMemory.getAsLong(),
          blockCache.usedBytes(),
          blockCache.hits(),
          blockCache.misses(),
          fileReads.totals(),
          openSnapshots.getAsInt(),
          scheduler.running());
    } finally {
      v.release();
    }
  }

  private EngineStats.LevelStats levelStats(Version v, int l) {
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
    return new EngineStats.LevelStats(
        l,
        v.files(l).size(),
        bytes,
        entries,
        tombstones,
        bloom,
        options.bloom().bitsPerKey(l),
        l == 0 ? 0 : options.compaction().targetBytes(v, l),
        picker.sizePressure(v, l),
        blob,
        counters.bloomChecks(l),
        counters.bloomUseful(l),
        counters.bloomFalsePositives(l));
  }

  private static EngineStats.ByteSplit split(EngineCounters.Bytes b) {
    return new EngineStats.ByteSplit(b.key(), b.value(), b.blob());
  }

  @Override
  public int compactionsInProgress() {
    return scheduler.running();
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
    return pressure.pendingCompactionBytes();
  }

  @Override
  public long blobLiveBytes() {
    return versions.current().blobFiles().values().stream()
        .mapToLong(BlobFileMeta::liveBytes)
        .sum();
  }

  @Override
  public long blobDeadBytes() {
    return versions.current().blobFiles().values().stream()
        .mapToLong(BlobFileMeta::garbageBytes)
        .sum();
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
    return memtables.mutableBytes();
  }

  @Override
  public long memtableNativeBytes() {
    return memtables.chunks().nativeBytes();
  }

  @Override
  public long indexAndFilterBytes() {
    return tableReaderMemory.getAsLong();
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

  @Override
  public long fileReadBytes(FileReads.FileKind kind, FileReads.Cause cause) {
    return fileReads.bytes(kind, cause);
  }
}
