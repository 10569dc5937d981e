package io.shale.engine;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.pressure.IoBudgetOptions;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;

/**
 * Everything an engine is opened with. Immutable; build from {@link #defaults()} with the {@code
 * with...} methods, or load from TOML with {@link io.shale.engine.config.EngineConfig}. Each value
 * is validated when its record is built, and the error names the TOML key. The defaults are the
 * seed's values ({@code ops/config/shale.toml} documents every key).
 *
 * @param memtableSizeBytes {@code [lsm] memtable_size} (64 MiB): a memtable is sealed and flushed
 *     when it reaches this size. Larger means fewer level-0 files and more memory.
 * @param blockCacheBytes {@code [lsm] block_cache_size} (256 MiB): decoded data blocks kept in
 *     memory, counted in bytes, when tables are read without a mapping ({@code mmap_reads =
 *     false}).
 * @param maxOpenFiles {@code [lsm] max_open_files} (1000): tables kept open; blob files kept open
 *     are bounded at a quarter of it.
 * @param mmapReads {@code [lsm] mmap_reads} (false): read tables through a memory mapping; a point
 *     read then copies from the page cache without a system call, and the page cache replaces the
 *     block cache, which is faster while the data set fits in memory (see {@link
 *     io.shale.engine.sstable.TableReader}). Off by default because Shale's workloads do not fit: a
 *     page fault reads the device's whole read-ahead window around the page (Java cannot {@code
 *     madvise(MADV_RANDOM)}), so with a data set 3x memory the seed benchmark fell to 800 ops/s
 *     with mapped reads against about 5,000 with positional reads.
 * @param table {@code [lsm] block_size} (4 KiB), {@code block_restart_interval} (16), {@code
 *     compression} ("lz4")
 * @param bloom {@code [lsm.bloom]}
 * @param compaction {@code [lsm.compaction]}
 * @param blob {@code [lsm.blob]}
 * @param writePressure {@code [lsm.write_pressure]}
 * @param budget {@code [lsm.compaction.budget]}
 */
public record EngineOptions(
    long memtableSizeBytes,
    long blockCacheBytes,
    int maxOpenFiles,
    boolean mmapReads,
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
        false,
        new TableWriteOptions(4096, 16, Compression.LZ4),
        BloomPolicy.DEFAULT,
        CompactionOptions.DEFAULT,
        BlobOptions.DEFAULT,
        WritePressureOptions.DEFAULT,
        IoBudgetOptions.UNLIMITED);
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
        mmapReads,
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
            w.maxDelay()));
  }

  public EngineOptions withBlockCache(long bytes) {
    return new EngineOptions(
        memtableSizeBytes,
        bytes,
        maxOpenFiles,
        mmapReads,
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
        mmapReads,
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
        mmapReads,
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
        mmapReads,
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
        mmapReads,
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
        mmapReads,
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
        mmapReads,
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
        mmapReads,
        table,
        bloom,
        compaction,
        blob,
        writePressure,
        b);
  }
}
