package io.shale.engine.blob;

/**
 * {@code [lsm.blob]}, with the seed's values as defaults but for the size threshold.
 *
 * @param enabled separate large values at flush (true: the seed's "one knob to turn first")
 * @param minValueSizeBytes values at least this long go to blob files (4096, where the seed used
 *     8192: a value of a block or more is read on its own either way, so separating it costs a
 *     pointer, while inline it moves with every compaction of its range; much lower, small values
 *     pay a second read. Measurements: docs/benchmarks.md)
 * @param gcThresholdRatio a blob file whose dead bytes reach this fraction of its bytes is
 *     rewritten (0.5: space amplification from dead values stays under about 2x)
 * @param fileSizeBytes a flush or GC starts a new blob file past this size (256 MiB)
 * @param scanReadaheadBytes the largest read-ahead window of a scan's blob reads (256 KiB): a scan
 *     over values written together costs a few large reads instead of one read per value, while a
 *     scan whose values are scattered over files reads each exactly (0: no read-ahead)
 * @param adviseRandomReads tell the kernel that blob files are read at random (false, unlike
 *     tables): a scan's values lie in many blob files at once, and the kernel keeps a read-ahead
 *     state per file that follows each of them, while the scan's own read-ahead follows one file.
 *     With the advice, on 6 GiB in 2 GiB of memory under write bursts, disk bytes per operation
 *     fell by 28% but throughput by 20% and scans slowed (docs/benchmarks.md, "Cause, change,
 *     effect under write bursts")
 */
public record BlobOptions(
    boolean enabled,
    int minValueSizeBytes,
    double gcThresholdRatio,
    long fileSizeBytes,
    int scanReadaheadBytes,
    boolean adviseRandomReads) {

  public static final BlobOptions DEFAULT =
      new BlobOptions(true, 4096, 0.5, 256L << 20, 256 << 10, false);

  public BlobOptions {
    if (minValueSizeBytes < 1 || minValueSizeBytes > (64 << 20)) {
      throw new IllegalArgumentException(
          "lsm.blob.min_value_size_bytes must be in [1, 67108864], got " + minValueSizeBytes);
    }
    if (!(gcThresholdRatio > 0 && gcThresholdRatio <= 1)) {
      throw new IllegalArgumentException(
          "lsm.blob.gc_threshold_ratio must be in (0, 1], got " + gcThresholdRatio);
    }
    if (fileSizeBytes < (64 << 10) || fileSizeBytes > (1L << 40)) {
      throw new IllegalArgumentException(
          "lsm.blob.file_size must be in [64KiB, 1TiB], got " + fileSizeBytes);
    }
    if (scanReadaheadBytes < 0 || scanReadaheadBytes > (64 << 20)) {
      throw new IllegalArgumentException(
          "lsm.blob.scan_readahead_size must be in [0, 64MiB], got " + scanReadaheadBytes);
    }
  }

  /** Blob separation off (the seed's "before"). */
  public static BlobOptions disabled() {
    return new BlobOptions(
        false,
        DEFAULT.minValueSizeBytes,
        DEFAULT.gcThresholdRatio,
        DEFAULT.fileSizeBytes,
        DEFAULT.scanReadaheadBytes,
        DEFAULT.adviseRandomReads);
  }
}
