package io.shale.engine.key;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Key ordering and the internal-key trailer. The trailer is {@code sequence << 8 | kind}, so
 * sequences are limited to {@link #MAX_SEQUENCE} (2^56 - 1), far above any Raft index.
 */
public final class Keys {
  public static final long MAX_SEQUENCE = (1L << 56) - 1;
  public static final int TRAILER_SIZE = 8;

  /** Unsigned lexicographic order of user keys (what every KV store exposes). */
  public static final Comparator<byte[]> USER_ORDER = Keys::compare;

  private Keys() {}

  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  public static long trailer(long sequence, ValueKind kind) {
    return sequence << 8 | kind.code();
  }

  public static long sequenceOf(long trailer) {
    return trailer >>> 8;
  }

  /**
   * Internal order: user key ascending, then sequence descending. Two entries of the same key and
   * sequence are the same entry.
   */
  public static int compareInternal(byte[] keyA, long seqA, byte[] keyB, long seqB) {
    int c = compare(keyA, keyB);
    if (c != 0) {
      return c;
    }
    return Long.compare(seqB, seqA);
  }
}
