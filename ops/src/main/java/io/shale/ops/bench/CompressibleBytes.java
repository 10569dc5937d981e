package io.shale.ops.bench;

import java.util.SplittableRandom;

/**
 * Value bytes that compress about as real values do: a source buffer in which each 16-byte segment
 * either repeats the previous one or is random, half and half (LZ4 saves a third to a half), and an
 * 8-byte big-endian stamp at the front of each value so a reader can tell which value it got.
 */
public final class CompressibleBytes {
  private CompressibleBytes() {}

  /** {@code size} bytes (a multiple of 16), a pure function of {@code rnd}'s seed. */
  public static byte[] source(SplittableRandom rnd, int size) {
    byte[] b = new byte[size];
    byte[] seg = new byte[16];
    for (int off = 0; off < size; off += 16) {
      if (off == 0 || rnd.nextBoolean()) {
        putLong(seg, 0, rnd.nextLong());
        putLong(seg, 8, rnd.nextLong());
      }
      System.arraycopy(seg, 0, b, off, 16);
    }
    return b;
  }

  /** Writes {@code x} big-endian into {@code b[off, off + 8)}. */
  public static void putLong(byte[] b, int off, long x) {
    for (int j = 0; j < 8; j++) {
      b[off + j] = (byte) (x >>> (56 - 8 * j));
    }
  }

  /** The stamp {@link #putLong} wrote at the front of {@code v}. */
  public static long stamp(byte[] v) {
    long i = 0;
    for (int j = 0; j < 8; j++) {
      i = i << 8 | (v[j] & 0xFF);
    }
    return i;
  }
}
