package io.shale.engine.compaction;

/**
 * {@code [lsm.compaction]}.
 *
 * @param level0FileNumCompactionTrigger level-0 files that start a level-0 compaction (4: each
 *     point read probes every level-0 file, so keep few)
 * @param levelMultiplier each level's target is this many times the previous (10: the classic
 *     leveled trade-off, ~1.1x space amplification)
 * @param maxBytesForLevelBase target size of level 1 (256 MiB)
 * @param targetFileSizeBytes compaction output files are cut at this size (64 MiB)
 * @param numLevels levels in the tree (7)
 * @param threads background compaction threads (1: the seed's lesson is that compaction is
 *     disk-bound, and more threads made its tail worse)
 */
public record CompactionOptions(
    int level0FileNumCompactionTrigger,
    int levelMultiplier,
    long maxBytesForLevelBase,
    long targetFileSizeBytes,
    int numLevels,
    int threads,
    CompactionScore score) {

  public static final CompactionOptions DEFAULT =
      new CompactionOptions(4, 10, 256L << 20, 64L << 20, 7, 1, CompactionScore.SEED);

  public CompactionOptions {
    range("level0_file_num_compaction_trigger", level0FileNumCompactionTrigger, 1, 1000);
    range("level_multiplier", levelMultiplier, 2, 100);
    range("max_bytes_for_level_base", maxBytesForLevelBase, 64 << 10, 1L << 50);
    range("target_file_size_base", targetFileSizeBytes, 16 << 10, 1L << 40);
    range("num_levels", numLevels, 2, 20);
    range("threads", threads, 1, 64);
  }

  private static void range(String key, long v, long min, long max) {
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "lsm.compaction." + key + " must be in [" + min + ", " + max + "], got " + v);
    }
  }

  /** Target bytes of {@code level} (>= 1). */
  public long targetBytes(int level) {
    double t = maxBytesForLevelBase;
    for (int l = 1; l < level; l++) {
      t *= levelMultiplier;
    }
    return (long) Math.min(t, Long.MAX_VALUE / 2.0);
  }

  /** The size compaction output files are cut at on {@code level} (the same on every level). */
  public long targetBytesPerFile(int level) {
    return targetFileSizeBytes;
  }

  public CompactionOptions withScore(CompactionScore s) {
    return new CompactionOptions(
        level0FileNumCompactionTrigger,
        levelMultiplier,
        maxBytesForLevelBase,
        targetFileSizeBytes,
        numLevels,
        threads,
        s);
  }
}
