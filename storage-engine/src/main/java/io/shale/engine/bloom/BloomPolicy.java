package io.shale.engine.bloom;

/**
 * Bits per key by level: {@code [lsm.bloom] level_0, level_1, level_2, default}. Zero bits means no
 * filter for that level.
 */
public record BloomPolicy(int level0, int level1, int level2, int deeper) {
  /** The seed's values: 16, 14, 12, then 10. */
  public static final BloomPolicy DEFAULT = new BloomPolicy(16, 14, 12, 10);

  public BloomPolicy {
    check("level_0", level0);
    check("level_1", level1);
    check("level_2", level2);
    check("default", deeper);
  }

  private static void check(String key, int bits) {
    if (bits < 0 || bits > 64) {
      throw new IllegalArgumentException(
          "lsm.bloom." + key + " must be in [0, 64] bits per key, got " + bits);
    }
  }

  /** The same bits per key on every level (the "before" configuration of the seed). */
  public static BloomPolicy uniform(int bits) {
    return new BloomPolicy(bits, bits, bits, bits);
  }

  public int bitsPerKey(int level) {
    switch (level) {
      case 0:
        return level0;
      case 1:
        return level1;
      case 2:
        return level2;
      default:
        return deeper;
    }
  }
}
