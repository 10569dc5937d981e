package io.shale.engine.compaction;

import io.shale.engine.version.Version;

/**
 * An estimate of the bytes compaction must still rewrite to bring every level under its target, the
 * signal of {@code soft/hard_pending_compaction_bytes_limit}.
 *
 * <p>How it is computed, level by level from the top:
 *
 * <ul>
 *   <li>Level 0, when it holds at least the compaction trigger's number of files: all of level 0
 *       plus all of level 1 (a level-0 compaction merges its files with the level-1 files they
 *       overlap, and level-0 files usually span the key space). Level 0's bytes then count as moved
 *       into level 1.
 *   <li>Level L >= 1 whose size S (including what the levels above will push into it) exceeds its
 *       target T: the excess E = S - T moves to level L+1, and merging it rewrites E itself plus
 *       the part of level L+1 it overlaps, estimated as E * size(L+1) / S. So the level adds {@code
 *       E * (1 + size(L+1) / S)}, and E is carried into level L+1's size.
 * </ul>
 *
 * The last level never moves down. The estimate uses only file sizes, so it is cheap enough to
 * recompute after every flush and compaction.
 */
public final class PendingCompactionBytes {
  private PendingCompactionBytes() {}

  public static long estimate(Version v, CompactionOptions o) {
    int levels = v.numLevels();
    double total = 0;
    double carried = 0;
    if (v.files(0).size() >= o.level0FileNumCompactionTrigger()) {
      double l0 = v.levelBytes(0);
      total += l0 + (levels > 1 ? v.levelBytes(1) : 0);
      carried = l0;
    }
    for (int level = 1; level < levels - 1; level++) {
      double size = v.levelBytes(level) + carried;
      double target = o.targetBytes(level);
      carried = 0;
      if (size > target) {
        double excess = size - target;
        double next = v.levelBytes(level + 1);
        total += excess * (1 + next / size);
        carried = excess;
      }
    }
    return (long) Math.min(total, Long.MAX_VALUE / 2.0);
  }
}
