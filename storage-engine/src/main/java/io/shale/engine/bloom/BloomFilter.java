package io.shale.engine.bloom;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A standard Bloom filter over user keys with double hashing (Kirsch and Mitzenmacher: probe {@code
 * h1 + i * h2}), which keeps the false-positive rate of k independent hashes.
 *
 * <p>Serialized form: {@code bits[ceil(m/8)] | k u8}. The table's block trailer checksums it.
 * Theoretical false-positive rate for b bits per key with the optimal k = round(b ln 2): {@code (1
 * - e^(-k/b))^k}, about 0.8% at 10 bits and 0.05% at 16.
 *
 * <p>Immutable once built; {@link #mayContain} is safe from any number of threads. A filter read
 * from a table lies in native memory its table owns; probing it after the table freed that memory
 * throws {@link IllegalStateException}.
 */
public final class BloomFilter {
  private final MemorySegment data;
  private final long numBits;
  private final int k;

  private BloomFilter(MemorySegment data) {
    this.data = data;
    this.numBits = (data.byteSize() - 1) * 8;
    this.k = data.get(ValueLayout.JAVA_BYTE, data.byteSize() - 1) & 0xff;
  }

  /** Wrap a serialized filter. Precondition: {@code data} passed its block checksum. */
  public static BloomFilter fromBytes(byte[] data) {
    return of(MemorySegment.ofArray(data));
  }

  /**
   * Wrap a serialized filter in {@code data}, which must stay alive as long as the filter is
   * probed. Precondition: the bytes passed their block checksum.
   */
  public static BloomFilter of(MemorySegment data) {
    if (data.byteSize() < 2) {
      throw new IllegalArgumentException("filter too short: " + data.byteSize() + " bytes");
    }
    return new BloomFilter(data);
  }

  /** The optimal number of probes for {@code bitsPerKey}, clamped to [1, 30]. */
  public static int probesFor(int bitsPerKey) {
    return Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * Math.log(2))));
  }

  /** The theoretical false-positive rate at {@code bitsPerKey} with the optimal probe count. */
  public static double theoreticalFalsePositiveRate(int bitsPerKey) {
    int k = probesFor(bitsPerKey);
    return Math.pow(1 - Math.exp(-(double) k / bitsPerKey), k);
  }

  /**
   * Build a filter over the 64-bit hashes of {@code count} keys.
   *
   * @param hashes key hashes from {@link KeyHash#hash64}; only the first {@code count} are read
   */
  public static byte[] build(long[] hashes, int count, int bitsPerKey) {
    long bits = Math.max(64L, (long) count * bitsPerKey);
    int bytes = (int) ((bits + 7) / 8);
    bits = (long) bytes * 8;
    int k = probesFor(bitsPerKey);
    byte[] data = new byte[bytes + 1];
    data[bytes] = (byte) k;
    for (int i = 0; i < count; i++) {
      long h = hashes[i];
      int h1 = (int) h;
      int h2 = (int) (h >>> 32);
      for (int j = 0; j < k; j++) {
        long bit = ((h1 + j * h2) & 0xffffffffL) * bits >>> 32;
        data[(int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
      }
    }
    return data;
  }

  public boolean mayContain(byte[] userKey) {
    return mayContainHash(KeyHash.hash64(userKey));
  }

  public boolean mayContainHash(long h) {
    if (k > 30) {
      return true; // a probe count from a future format: be safe, never a false negative
    }
    int h1 = (int) h;
    int h2 = (int) (h >>> 32);
    for (int j = 0; j < k; j++) {
      long bit = ((h1 + j * h2) & 0xffffffffL) * numBits >>> 32;
      if ((data.get(ValueLayout.JAVA_BYTE, bit >>> 3) & (1 << (bit & 7))) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Bytes of memory this filter holds. */
  public int memoryBytes() {
    return (int) data.byteSize();
  }
}
