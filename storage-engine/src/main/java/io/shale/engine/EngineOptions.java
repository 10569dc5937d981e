package io.shale.engine;

import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;

/**
 * Everything an engine is opened with. Immutable; build from {@link #defaults()} with the
 * {@code with...} methods, or load from TOML with {@link io.shale.engine.config.EngineConfig}.
 * Each value is validated when the record is built, and the error names the TOML key.
 *
 * @param memtableSizeBytes {@code [lsm] memtable_size} (64 MiB): a memtable is sealed and
 *     flushed when it reaches this size. Larger means fewer level-0 files and more memory.
 * @param maxImmutableMemtables {@code [lsm] max_immutable_memtables} (2): sealed memtables
 *     waiting for flush before writes wait for the flush to catch up.
 * @param blockCacheBytes {@code [lsm] block_cache_size} (256 MiB): decoded data blocks kept in
 *     memory, counted in bytes, when tables are read without a mapping ({@code mmap_reads = false}).
 * @param maxOpenFiles {@code [lsm] max_open_files} (1000): tables kept open.
 * @param mmapReads {@code [lsm] mmap_reads} (true): read tables through a memory mapping; a point
 *     read then copies from the page cache without a system call, and the page cache replaces the
 *     block cache (see {@link io.shale.engine.sstable.TableReader} for the measurement).
 * @param table {@code [lsm] block_size} (4 KiB), {@code block_restart_interval} (16),
 *     {@code compression} ("lz4")
 * @param bloom {@code [lsm.bloom]}
 * @param compaction {@code [lsm.compaction]}
 */
public record EngineOptions(long memtableSizeBytes, int maxImmutableMemtables,
    long blockCacheBytes, int maxOpenFiles, boolean mmapReads, TableWriteOptions table, BloomPolicy bloom,
    CompactionOptions compaction) {

  /** Keys may be at most 64 KiB. */
  public static final int MAX_KEY_BYTES = 64 << 10;
  /** Values may be at most 64 MiB. */
  public static final int MAX_VALUE_BYTES = 64 << 20;

  public EngineOptions {
    if (memtableSizeBytes < (16 << 10) || memtableSizeBytes > (4L << 30)) {
      throw new IllegalArgumentException("lsm.memtable_size must be in [16KiB, 4GiB], got "
          + memtableSizeBytes);
    }
    if (maxImmutableMemtables < 1 || maxImmutableMemtables > 64) {
      throw new IllegalArgumentException("lsm.max_immutable_memtables must be in [1, 64], got "
          + maxImmutableMemtables);
    }
    if (blockCacheBytes < 0 || blockCacheBytes > (1L << 42)) {
      throw new IllegalArgumentException("lsm.block_cache_size must be in [0, 4TiB], got "
          + blockCacheBytes);
    }
    if (maxOpenFiles < 16 || maxOpenFiles > 1_000_000) {
      throw new IllegalArgumentException("lsm.max_open_files must be in [16, 1000000], got "
          + maxOpenFiles);
    }
    if (table == null || bloom == null || compaction == null) {
      throw new IllegalArgumentException("table, bloom and compaction options are required");
    }
  }

  public static EngineOptions defaults() {
    return new EngineOptions(64L << 20, 2, 256L << 20, 1000, true,
        new TableWriteOptions(4096, 16, Compression.LZ4), BloomPolicy.DEFAULT,
        CompactionOptions.DEFAULT);
  }

  public EngineOptions withMemtableSize(long bytes) {
    return new EngineOptions(bytes, maxImmutableMemtables, blockCacheBytes, maxOpenFiles, mmapReads, table,
        bloom, compaction);
  }

  public EngineOptions withMaxImmutableMemtables(int n) {
    return new EngineOptions(memtableSizeBytes, n, blockCacheBytes, maxOpenFiles, mmapReads, table, bloom,
        compaction);
  }

  public EngineOptions withBlockCache(long bytes) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, bytes, maxOpenFiles, mmapReads, table,
        bloom, compaction);
  }

  public EngineOptions withMaxOpenFiles(int n) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, blockCacheBytes, n, mmapReads, table,
        bloom, compaction);
  }

  public EngineOptions withMmapReads(boolean on) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, blockCacheBytes,
        maxOpenFiles, on, table, bloom, compaction);
  }

  public EngineOptions withTable(TableWriteOptions t) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, blockCacheBytes,
        maxOpenFiles, mmapReads, t, bloom, compaction);
  }

  public EngineOptions withBloom(BloomPolicy b) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, blockCacheBytes,
        maxOpenFiles, mmapReads, table, b, compaction);
  }

  public EngineOptions withCompaction(CompactionOptions c) {
    return new EngineOptions(memtableSizeBytes, maxImmutableMemtables, blockCacheBytes,
        maxOpenFiles, mmapReads, table, bloom, c);
  }
}
