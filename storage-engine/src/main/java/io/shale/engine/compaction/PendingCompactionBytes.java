package io.shale.engine.compaction;

import io.shale.engine.version.Version;

/**
 * An estimate of the bytes compaction must still rewrite to bring every level under its target, the
 * signal of {@code soft/hard_pending_compaction_bytes_limit}. From the top, level by level:
 *
 * <ul>
 *   <li>Level 0 at or over its compaction trigger: all of level 0 plus all of level 1 (level-0
 *       files usually span the key space); level 0's bytes are carried into level 1.
 *   <li>Level L >= 1 whose size S (with what is carried into it) exceeds its target T: the excess E
 *       = S - T moves down and rewrites itself plus the fraction E / S of level L+1 (the part it
 *       overlaps), so the level adds {@code E * (1 + size(L+1) / S)}; E is carried on.
 * </ul>
 *
 * The last level never moves down. File sizes only, so cheap enough to recompute after every flush
 * and compaction.
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
      double target = o.targetBytes(v, level);
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
