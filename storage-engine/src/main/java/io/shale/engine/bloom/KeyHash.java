package io.shale.engine.bloom;

/**
 * A 64-bit hash of a byte string for Bloom filters: 8-byte words mixed by multiply-rotate rounds,
 * finished with a full avalanche so that both 32-bit halves are usable as independent hashes. The
 * function is part of the filter format: changing it changes what every stored filter means.
 */
public final class KeyHash {
  private static final long M1 = 0x9E3779B97F4A7C15L;
  private static final long M2 = 0xC2B2AE3D27D4EB4FL;
  private static final long M3 = 0x165667B19E3779F9L;

  private KeyHash() {}

  public static long hash64(byte[] key) {
    long h = M3 ^ (key.length * M1);
    int i = 0;
    int n = key.length;
    for (; i + 8 <= n; i += 8) {
      long w =
          (key[i] & 0xffL)
              | (key[i + 1] & 0xffL) << 8
              | (key[i + 2] & 0xffL) << 16
              | (key[i + 3] & 0xffL) << 24
              | (key[i + 4] & 0xffL) << 32
              | (key[i + 5] & 0xffL) << 40
              | (key[i + 6] & 0xffL) << 48
              | (key[i + 7] & 0xffL) << 56;
      h ^= Long.rotateLeft(w * M2, 31) * M1;
      h = Long.rotateLeft(h, 27) * M1 + M3;
    }
    long tail = 0;
    for (int s = 0; i < n; i++, s += 8) {
      tail |= (key[i] & 0xffL) << s;
    }
    h ^= Long.rotateLeft(tail * M2, 29) * M1;
    // Avalanche (the finaliser of MurmurHash3's 64-bit variant, a published constant set).
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
