package io.shale.engine.compaction;

import io.shale.engine.version.Version;

/**
 * {@code [lsm.compaction]}.
 *
 * @param level0FileNumCompactionTrigger level-0 files that start a level-0 compaction (4: each
 *     point read probes every level-0 file, so keep few)
 * @param levelMultiplier each level's target is this many times the previous (10: the classic
 *     leveled trade-off, ~1.1x space amplification)
 * @param maxBytesForLevelBase target size of level 1 (256 MiB), or its ceiling when {@code
 *     levelBaseFollowsFlushes}
 * @param levelBaseFollowsFlushes level 1's target is what level 0 holds at its trigger (trigger x
 *     the recent flush table size), kept between {@code targetFileSizeBytes} and {@code
 *     maxBytesForLevelBase} (true: level-0 files span the key space, so a level-0 compaction
 *     rewrites all of level 1; with values in blob files a flush table is a fraction of the
 *     memtable, and a fixed level 1 made each level-0 compaction write 4 to 6 bytes per byte it
 *     moved down)
 * @param targetFileSizeBytes compaction output files are cut at this size (64 MiB)
 * @param numLevels levels in the tree (7)
 * @param threads background compaction threads (1: the seed's lesson is that compaction is
 *     disk-bound, and more threads made its tail worse)
 */
public record CompactionOptions(
    int level0FileNumCompactionTrigger,
    int levelMultiplier,
    long maxBytesForLevelBase,
    boolean levelBaseFollowsFlushes,
    long targetFileSizeBytes,
    int numLevels,
    int threads,
    CompactionScore score) {

  public static final CompactionOptions DEFAULT =
      new CompactionOptions(4, 10, 256L << 20, true, 64L << 20, 7, 1, CompactionScore.SEED);

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

  /** Target bytes of level 1 in {@code v} (see {@code levelBaseFollowsFlushes}). */
  public long levelBaseBytes(Version v) {
    long flushed = v.level0TableBytes();
    if (!levelBaseFollowsFlushes || flushed == 0) {
      return maxBytesForLevelBase;
    }
    long atTrigger = flushed * level0FileNumCompactionTrigger;
    return Math.min(maxBytesForLevelBase, Math.max(targetFileSizeBytes, atTrigger));
  }

  /** Target bytes of {@code level} (>= 1) in {@code v}. */
  public long targetBytes(Version v, int level) {
    double t = levelBaseBytes(v);
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
        levelBaseFollowsFlushes,
        targetFileSizeBytes,
        numLevels,
        threads,
        s);
  }
}
