package io.shale.ops.seed;

import java.util.SplittableRandom;

/**
 * Value bytes for the seed benchmark: slices of one fixed buffer in which each 16-byte segment
 * either repeats the previous one or is random, so LZ4 shrinks values by about a third (as real
 * records compress somewhat), and every engine stores the same bytes. The first 8 bytes of a value
 * are its key number and the next 4 its length, so that a read can be checked.
 */
final class ValueSource {
  private static final int BUFFER = 1 << 20;
  private final byte[] source = new byte[BUFFER + ValueSizes.MAX];

  ValueSource(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int at = 0; at < source.length; at += 16) {
      boolean repeat = at >= 16 && rnd.nextInt(3) == 0;
      for (int i = at; i < Math.min(at + 16, source.length); i++) {
        source[i] = repeat ? source[i - 16] : (byte) rnd.nextInt(256);
      }
    }
  }

  /** The value of key {@code n} at its {@code version}-th write, {@code size} bytes (>= 12). */
  byte[] value(long n, long version, int size) {
    byte[] v = new byte[size];
    int from = (int) Long.remainderUnsigned(mix(n * 0x9E3779B97F4A7C15L + version), BUFFER);
    System.arraycopy(source, from, v, 0, size);
    for (int i = 0; i < 8; i++) {
      v[i] = (byte) (n >>> (56 - 8 * i));
    }
    for (int i = 0; i < 4; i++) {
      v[8 + i] = (byte) (size >>> (24 - 8 * i));
    }
    return v;
  }

  /** Null if {@code v} is a whole value of key {@code n}, else what is wrong with it. */
  static String check(long n, byte[] v) {
    long got = 0;
    for (int i = 0; i < 8; i++) {
      got = (got << 8) | (v[i] & 0xFF);
    }
    int len = 0;
    for (int i = 0; i < 4; i++) {
      len = (len << 8) | (v[8 + i] & 0xFF);
    }
    if (got != n) {
      return "value of key " + n + " belongs to key " + got;
    }
    return len == v.length
        ? null
        : "value of key " + n + " is " + v.length + " bytes, written as " + len;
  }

  private static long mix(long x) {
    x ^= x >>> 33;
    x *= 0xff51afd7ed558ccdL;
    x ^= x >>> 33;
    return x;
  }
}
