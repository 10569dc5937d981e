package io.shale.ops.seed;

/**
 * The sizes the seed benchmark gives every engine alike, scaled down with the data set so that a
 * run of minutes (not the seed's hours) still flushes, compacts down several levels and collects
 * blob files. The seed's settings that are ratios or thresholds (Bloom bits, blob threshold, GC
 * ratio, L0 triggers, pending-bytes limits, score weights) are not scaled.
 *
 * @param memtableBytes memtable size (RocksDB {@code write_buffer_size})
 * @param levelBaseBytes level-1 target ({@code max_bytes_for_level_base}), 4 memtables
 * @param targetFileBytes table size at which compaction output is cut
 * @param blobFileBytes blob file size
 * @param blockCacheBytes block cache size (both engines' caches live outside the Java heap)
 */
public record BenchScale(
    long memtableBytes,
    long levelBaseBytes,
    long targetFileBytes,
    long blobFileBytes,
    long blockCacheBytes) {
  private static final long MIB = 1L << 20;

  /** The default run's sizes: a data set of about 2 GiB. */
  public static final BenchScale FULL =
      new BenchScale(4 * MIB, 16 * MIB, 4 * MIB, 32 * MIB, 32 * MIB);

  /** {@code --quick}: a data set of tens of MiB, so that a few seconds still compact. */
  public static final BenchScale QUICK =
      new BenchScale(2 * MIB, 8 * MIB, 2 * MIB, 8 * MIB, 8 * MIB);
}
