package io.shale.ops.seed;

import java.util.SplittableRandom;

/**
 * The seed's request stream over {@code initialKeys} loaded keys, deterministic for a seed (so
 * every engine of one run sees the same requests). Not thread-safe.
 *
 * <ul>
 *   <li>80% point reads: 90% zipfian over all keys (theta 0.99, ranks scrambled over the key
 *       space), 10% uniform inside the hot ranges (to measure tables touched there);
 *   <li>15% range scans of 10 to 100 keys (uniform length) from a zipfian start key;
 *   <li>5% writes: 60% overwrites of a zipfian key, 15% inserts of new keys (appended to the key
 *       space), 25% deletes of a uniform key inside the hot ranges.
 * </ul>
 *
 * Deletes land only in the {@link #HOT_RANGES} hot ranges (runs of keys, each 0.5% of the key
 * space), so their tables gather tombstones; keys sort in key-number order ({@link #key}).
 */
public final class SeedWorkload {
  public static final int HOT_RANGES = 4;

  /** Every key is this long: {@code user} and 12 decimal digits. */
  public static final int KEY_BYTES = 16;

  private static final double HOT_FRACTION = 0.005;

  /** What one request does. */
  public enum Kind {
    GET,
    GET_HOT,
    SCAN,
    OVERWRITE,
    INSERT,
    DELETE
  }

  /** One request: its kind, key number, scan length (scans) and value size (puts). */
  public record Op(Kind kind, long key, int scanLength, int valueSize) {}

  private final SplittableRandom rnd;
  private final Zipfian zipf;
  private final long initialKeys;
  private final long hotLength;
  private final long[] hotStarts = new long[HOT_RANGES];
  private long nextInsert;

  public SeedWorkload(long initialKeys, long seed) {
    this(initialKeys, seed, initialKeys);
  }

  /**
   * A stream whose inserts take key numbers from {@code insertBase} upwards, so that several
   * streams (one per client thread) can insert without colliding.
   */
  public SeedWorkload(long initialKeys, long seed, long insertBase) {
    this.rnd = new SplittableRandom(seed);
    this.initialKeys = initialKeys;
    this.zipf = new Zipfian(initialKeys, 0.99);
    this.hotLength = Math.max(1, (long) (initialKeys * HOT_FRACTION));
    for (int i = 0; i < HOT_RANGES; i++) {
      // Spread over the key space: range i starts in the i-th quarter.
      hotStarts[i] = (initialKeys / HOT_RANGES) * i + initialKeys / (2L * HOT_RANGES);
    }
    this.nextInsert = insertBase;
  }

  /** The key bytes of key number {@code n}. */
  public static byte[] key(long n) {
    if (n < 0 || n >= 1_000_000_000_000L) {
      throw new IllegalArgumentException("key number out of range: " + n);
    }
    byte[] k = new byte[KEY_BYTES];
    k[0] = 'u';
    k[1] = 's';
    k[2] = 'e';
    k[3] = 'r';
    for (int i = KEY_BYTES - 1; i >= 4; i--, n /= 10) {
      k[i] = (byte) ('0' + n % 10);
    }
    return k;
  }

  /** The inverse of {@link #key}. */
  public static long keyNumber(byte[] key) {
    long n = 0;
    for (int i = 4; i < KEY_BYTES; i++) {
      n = n * 10 + (key[i] - '0');
    }
    return n;
  }

  /** The hot ranges as [start, end) key-number pairs. */
  public long[][] hotRanges() {
    long[][] r = new long[HOT_RANGES][];
    for (int i = 0; i < HOT_RANGES; i++) {
      r[i] = new long[] {hotStarts[i], hotStarts[i] + hotLength};
    }
    return r;
  }

  /** True if key number {@code n} lies in a hot (delete-heavy) range. */
  public boolean isHot(long n) {
    for (long s : hotStarts) {
      if (n >= s && n < s + hotLength) {
        return true;
      }
    }
    return false;
  }

  private long zipfianKey() {
    return scramble(zipf.next(rnd)) % initialKeys;
  }

  private long hotKey() {
    return hotStarts[rnd.nextInt(HOT_RANGES)] + rnd.nextLong(hotLength);
  }

  /** A bijective-enough 64-bit mix so that popular ranks scatter over the key space. */
  private static long scramble(long x) {
    x ^= x >>> 33;
    x *= 0xff51afd7ed558ccdL;
    x ^= x >>> 33;
    x *= 0xc4ceb9fe1a85ec53L;
    x ^= x >>> 33;
    return x & Long.MAX_VALUE;
  }

  public Op next() {
    double u = rnd.nextDouble();
    if (u < 0.80) {
      return rnd.nextDouble() < 0.9
          ? new Op(Kind.GET, zipfianKey(), 0, 0)
          : new Op(Kind.GET_HOT, hotKey(), 0, 0);
    }
    if (u < 0.95) {
      return new Op(Kind.SCAN, zipfianKey(), 10 + rnd.nextInt(91), 0);
    }
    double w = rnd.nextDouble();
    if (w < 0.60) {
      return new Op(Kind.OVERWRITE, zipfianKey(), 0, ValueSizes.next(rnd));
    }
    if (w < 0.75) {
      return new Op(Kind.INSERT, nextInsert++, 0, ValueSizes.next(rnd));
    }
    return new Op(Kind.DELETE, hotKey(), 0, 0);
  }

  /** An overwrite as the clients' are: a zipfian initial key, a value of the seed's sizes. */
  public Op nextOverwrite() {
    return new Op(Kind.OVERWRITE, zipfianKey(), 0, ValueSizes.next(rnd));
  }

  /** The value size of key {@code n} in the load phase (deterministic per key). */
  public static int loadValueSize(long n, long seed) {
    return ValueSizes.next(new SplittableRandom(seed * 0x9E3779B97F4A7C15L + n));
  }
}
