package io.shale.engine.version;

/**
 * A blob file as the version set knows it: what was written into it, and how much of that the
 * current version no longer references (garbage, found when compaction drops a pointer). Immutable;
 * garbage grows by replacing the record.
 */
public record BlobFileMeta(
    long number,
    long fileSize,
    long totalBytes,
    long totalCount,
    long garbageBytes,
    long garbageCount) {

  public long liveBytes() {
    return totalBytes - garbageBytes;
  }

  /** Dead bytes over total value bytes, in [0, 1]. */
  public double garbageRatio() {
    return totalBytes == 0 ? 1 : (double) garbageBytes / totalBytes;
  }

  public BlobFileMeta plusGarbage(long bytes, long count) {
    return new BlobFileMeta(
        number, fileSize, totalBytes, totalCount, garbageBytes + bytes, garbageCount + count);
  }
}
