package io.shale.engine;

import java.util.List;

/**
 * A point-in-time summary of an engine, one immutable value.
 *
 * @param pinnedObsoleteBytes bytes of table files no longer in the current version that open
 *     snapshots, iterators or checkpoints in progress still hold (the seed's "old SSTable
 *     generations")
 */
public record EngineStats(long lastAppliedIndex, long persistedAppliedIndex, long memtableBytes,
    int immutableMemtables, List<LevelStats> levels, long flushes, long flushBytesWritten,
    long compactions, long trivialMoves, long compactionBytesRead, long compactionBytesWritten,
    long pinnedObsoleteBytes, long blockCacheBytes, long blockCacheHits, long blockCacheMisses,
    int openSnapshots) {

  /**
   * One level.
   *
   * @param bloomBytes memory of the Bloom filters of the level's files
   * @param bloomBitsPerKey bits per key the level's new tables get
   * @param sizePressure level bytes / target (level 0: files / trigger)
   */
  public record LevelStats(int level, int files, long bytes, long entries, long tombstones,
      long bloomBytes, int bloomBitsPerKey, long targetBytes, double sizePressure) {}

  public int totalFiles() {
    return levels.stream().mapToInt(LevelStats::files).sum();
  }

  public long totalBytes() {
    return levels.stream().mapToLong(LevelStats::bytes).sum();
  }
}
