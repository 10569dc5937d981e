package io.shale.engine;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.pressure.IoBudgetOptions;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;

/**
 * Everything an engine is opened with; immutable. Build from {@link #defaults()} (the seed's
 * values) with the {@code with...} methods, or load from TOML with {@link
 * io.shale.engine.config.EngineConfig}; each value is validated when its record is built and the
 * error names the TOML key ({@code ops/config/shale.toml} documents every key). The nested records
 * are {@code [lsm.bloom]}, {@code [lsm.compaction]}, {@code [lsm.blob]}, {@code
 * [lsm.write_pressure]} and {@code [lsm.compaction.budget]}.
 *
 * @param memtableSizeBytes {@code [lsm] memtable_size}: sealed and flushed at this size
 * @param blockCacheBytes {@code [lsm] block_cache_size}: decoded blocks, used without mmap reads
 * @param maxOpenFiles {@code [lsm] max_open_files}: tables kept open, and blob files kept open (two
 *     caches of this size: a blob file closed too early costs an open and its footer read on the
 *     next value it serves, as RocksDB's one cache of this size for both kinds)
 * @param indexAndFilterMemoryBytes {@code [lsm] index_and_filter_memory}: native memory for the
 *     index blocks and Bloom filters of open tables, about 2 bytes a key with the default filter
 *     (so the default 256 MiB holds those of about 130 M keys). Beyond it the least recently used
 *     tables are closed, and reopened (footer, index and filter read again) by the next read that
 *     needs them, as RocksDB does when it charges them to a bounded cache. Off the heap: the heap a
 *     node needs does not grow with its data
 * @param mmapReads {@code [lsm] mmap_reads}: pays only while data fits in memory (a page fault
 *     reads the device's read-ahead window); docs/benchmarks.md, "Cause, change, effect"
 * @param adviseRandomReads {@code [lsm] advise_random_reads}: tell the kernel that table files are
 *     read at random (posix_fadvise RANDOM, as RocksDB's advise_random_on_open; true), so a point
 *     read of one block is not stretched to the device's read-ahead window. Scans and compactions
 *     read tables ahead themselves ({@link io.shale.engine.io.Readahead}). Blob files have their
 *     own switch ({@link io.shale.engine.blob.BlobOptions#adviseRandomReads}). Measured in
 *     docs/benchmarks.md, "Cause, change, effect under write bursts"
 * @param table {@code [lsm] block_size}, {@code block_restart_interval}, {@code compression}
 */
public record EngineOptions(
    long memtableSizeBytes,
    long blockCacheBytes,
    int maxOpenFiles,
    long indexAndFilterMemoryBytes,
    boolean mmapReads,
    boolean adviseRandomReads,
    TableWriteOptions table,
    BloomPolicy bloom,
    CompactionOptions compaction,
    BlobOptions blob,
    WritePressureOptions writePressure,
    IoBudgetOptions budget) {

  /** Keys may be at most 64 KiB. */
  public static final int MAX_KEY_BYTES = 64 << 10;

  /** Values may be at most 64 MiB. */
  public static final int MAX_VALUE_BYTES = 64 << 20;

  public EngineOptions {
    if (memtableSizeBytes < (16 << 10) || memtableSizeBytes > (4L << 30)) {
      throw new IllegalArgumentException(
          "lsm.memtable_size must be in [16KiB, 4GiB], got " + memtableSizeBytes);
    }
    if (blockCacheBytes < 0 || blockCacheBytes > (1L << 42)) {
      throw new IllegalArgumentException(
          "lsm.block_cache_size must be in [0, 4TiB], got " + blockCacheBytes);
    }
    if (maxOpenFiles < 16 || maxOpenFiles > 1_000_000) {
      throw new IllegalArgumentException(
          "lsm.max_open_files must be in [16, 1000000], got " + maxOpenFiles);
    }
    if (indexAndFilterMemoryBytes < (1 << 20) || indexAndFilterMemoryBytes > (1L << 40)) {
      throw new IllegalArgumentException(
          "lsm.index_and_filter_memory must be in [1MiB, 1TiB], got " + indexAndFilterMemoryBytes);
    }
    if (table == null
        || bloom == null
        || compaction == null
        || blob == null
        || writePressure == null
        || budget == null) {
      throw new IllegalArgumentException("every option group is required");
    }
  }

  public static EngineOptions defaults() {
    return new EngineOptions(
        64L << 20,
        256L << 20,
        1000,
        256L << 20,
        false,
        true,
        new TableWriteOptions(4096, 16, Compression.LZ4),
        BloomPolicy.DEFAULT,
        CompactionOptions.DEFAULT,
        BlobOptions.DEFAULT,
        WritePressureOptions.DEFAULT,
        IoBudgetOptions.UNLIMITED);
  }

  /**
   * The most native memory the memtables take: the mutable one and {@link #maxImmutableMemtables()}
   * sealed ones, each with its chunks' slack; their chunk pool keeps as much after a write burst.
   */
  public long memtableNativeBytes() {
    return io.shale.engine.memtable.ChunkPool.nativeBytes(
        memtableSizeBytes, maxImmutableMemtables() + 1);
  }

  /**
   * The most Java heap the engine's table builds take at once: one flush and each compaction
   * thread, each holding its keys' hashes ({@link
   * io.shale.engine.compaction.TableOutput#BUILD_HEAP_BYTES}).
   */
  public long tableBuildHeapBytes() {
    return (compaction.threads() + 1L) * io.shale.engine.compaction.TableOutput.BUILD_HEAP_BYTES;
  }

  /**
   * Sealed memtables at which writes stop ({@code [lsm.write_pressure] max_immutable_memtables}).
   */
  public int maxImmutableMemtables() {
    return writePressure.maxImmutableMemtables();
  }

  public EngineOptions withMemtableSize(long bytes) {
    return new EngineOptions(
        bytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withMaxImmutableMemtables(int n) {
    WritePressureOptions w = writePressure;
    return withWritePressure(
        new WritePressureOptions(
            w.enabled(),
            w.level0SlowdownWritesTrigger(),
            w.level0StopWritesTrigger(),
            w.softPendingCompactionBytesLimit(),
            w.hardPendingCompactionBytesLimit(),
            n,
            w.maxDelay(),
            w.delayedWriteRate()));
  }

  public EngineOptions withBlockCache(long bytes) {
    return new EngineOptions(
        memtableSizeBytes,
        bytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withMaxOpenFiles(int n) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        n,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withIndexAndFilterMemory(long bytes) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        bytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withMmapReads(boolean on) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        on,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withAdviseRandomReads(boolean on) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        on,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withTable(TableWriteOptions t) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        t,
        bloom,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withBloom(BloomPolicy b) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        b,
        compaction,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withCompaction(CompactionOptions c) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        c,
        blob,
        writePressure,
        budget);
  }

  public EngineOptions withBlob(BlobOptions b) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        b,
        writePressure,
        budget);
  }

  public EngineOptions withWritePressure(WritePressureOptions w) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        w,
        budget);
  }

  public EngineOptions withBudget(IoBudgetOptions b) {
    return new EngineOptions(
        memtableSizeBytes,
        blockCacheBytes,
        maxOpenFiles,
        indexAndFilterMemoryBytes,
        mmapReads,
        adviseRandomReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        b);
  }
}
