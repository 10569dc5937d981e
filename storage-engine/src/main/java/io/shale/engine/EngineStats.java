package io.shale.engine;

import io.shale.engine.io.FileReads;
import io.shale.engine.pressure.WritePressure;
import java.util.List;

/**
 * A point-in-time summary of an engine, one immutable value (for the CLI, the demo, tests).
 * Counters are cumulative since the engine was opened.
 *
 * @param pinnedObsoleteBytes bytes of table and blob files no longer in the current version that
 *     open snapshots, iterators or checkpoints in progress still hold (the seed's "old SSTable
 *     generations")
 * @param compactionRead key, inline-value and blob bytes compactions (and blob GC) read
 * @param compactionWritten the same, written
 * @param blobFiles every blob file of the current version with its live and dead bytes
 * @param blobGcRelocatedBytes values moved out of blob files due for GC (by blob GC jobs and by
 *     compactions)
 * @param blobGcBytesWritten bytes written to collect blob garbage: relocated values, plus the
 *     tables blob GC jobs rewrote
 * @param blobBytesReclaimed bytes of blob files dropped once nothing pointed into them; {@code
 *     blobGcBytesWritten / blobBytesReclaimed} is what each reclaimed byte cost
 * @param tableReaderMemoryBytes native bytes the open tables hold: Bloom filters and index blocks
 *     (RocksDB's estimate-table-readers-mem), bounded by {@code lsm.index_and_filter_memory}
 * @param fileReads bytes read from table and blob files, by why (gets, scans, compactions and blob
 *     GC, opening and verifying files): what the engine asked the kernel for, to compare with what
 *     the disk read
 * @param compactionsInProgress compactions and blob GC jobs running now (the seed's {@code
 *     lsm.compactions.in_progress})
 */
public record EngineStats(
    long lastAppliedIndex,
    long persistedAppliedIndex,
    long memtableBytes,
    int immutableMemtables,
    List<LevelStats> levels,
    long flushes,
    long flushBytesWritten,
    long compactions,
    long trivialMoves,
    long compactionBytesRead,
    long compactionBytesWritten,
    ByteSplit compactionRead,
    ByteSplit compactionWritten,
    long pendingCompactionBytes,
    WritePressure writePressure,
    long writeDelayNanos,
    long throttledWrites,
    List<BlobFileStats> blobFiles,
    long blobGcRuns,
    long blobGcRelocatedBytes,
    long blobGcBytesWritten,
    long blobBytesReclaimed,
    long pinnedObsoleteBytes,
    long tableReaderMemoryBytes,
    long blockCacheBytes,
    long blockCacheHits,
    long blockCacheMisses,
    FileReads.Totals fileReads,
    int openSnapshots,
    int compactionsInProgress) {

  /**
   * One level.
   *
   * @param bloomBytes memory of the Bloom filters of the level's files
   * @param bloomBitsPerKey bits per key the level's new tables get
   * @param sizePressure level bytes / target (level 0: files / trigger)
   * @param blobBytes bytes of blob values the level's pointers reference
   * @param bloomChecks point-read probes of this level's filters
   * @param bloomUseful probes the filter answered "absent"
   * @param bloomFalsePositives probes the filter passed for a key the table did not hold
   */
  public record LevelStats(
      int level,
      int files,
      long bytes,
      long entries,
      long tombstones,
      long bloomBytes,
      int bloomBitsPerKey,
      long targetBytes,
      double sizePressure,
      long blobBytes,
      long bloomChecks,
      long bloomUseful,
      long bloomFalsePositives) {}

  /** Bytes split by what they are: keys, values stored inline, values in blob files. */
  public record ByteSplit(long keyBytes, long valueBytes, long blobBytes) {
    public long total() {
      return keyBytes + valueBytes + blobBytes;
    }
  }

  /** A blob file: what was written into it and how much of it is dead. */
  public record BlobFileStats(
      long number,
      long fileSize,
      long valueBytes,
      long liveBytes,
      long deadBytes,
      double garbageRatio) {}

  public int totalFiles() {
    return levels.stream().mapToInt(LevelStats::files).sum();
  }

  public long totalBytes() {
    return levels.stream().mapToLong(LevelStats::bytes).sum();
  }

  /** Value bytes the current version still references in blob files. */
  public long blobLiveBytes() {
    return blobFiles.stream().mapToLong(BlobFileStats::liveBytes).sum();
  }

  /** Value bytes in blob files that nothing in the current version references any more. */
  public long blobDeadBytes() {
    return blobFiles.stream().mapToLong(BlobFileStats::deadBytes).sum();
  }

  /** Bytes on disk of the current version: tables plus blob files. */
  public long diskBytes() {
    return totalBytes() + blobFiles.stream().mapToLong(BlobFileStats::fileSize).sum();
  }
}
