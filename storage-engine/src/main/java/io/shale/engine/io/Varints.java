package io.shale.engine.io;

/**
 * Unsigned LEB128 varints and little-endian fixed-width integers, the building blocks of every
 * Shale format. Readers take an explicit position holder so that a hot decoding loop allocates
 * nothing.
 */
public final class Varints {
  private Varints() {}

  /** A cursor into a byte array; decoding functions advance {@link #pos}. */
  public static final class Cursor {
    public final byte[] buf;
    public int pos;
    public final int limit;

    public Cursor(byte[] buf, int pos, int limit) {
      this.buf = buf;
      this.pos = pos;
      this.limit = limit;
    }

    public boolean hasRemaining() {
      return pos < limit;
    }
  }

  public static int readVarint32(Cursor c) {
    long v = readVarint64(c);
    if (v < 0 || v > Integer.MAX_VALUE) {
      throw new IllegalStateException("varint32 out of range: " + v);
    }
    return (int) v;
  }

  public static long readVarint64(Cursor c) {
    long result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (c.pos >= c.limit) {
        throw new IllegalStateException("truncated varint at " + c.pos);
      }
      byte b = c.buf[c.pos++];
      result |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return result;
      }
    }
    throw new IllegalStateException("varint longer than 10 bytes at " + c.pos);
  }

  public static long readFixed64(byte[] b, int p) {
    return (b[p] & 0xffL)
        | (b[p + 1] & 0xffL) << 8
        | (b[p + 2] & 0xffL) << 16
        | (b[p + 3] & 0xffL) << 24
        | (b[p + 4] & 0xffL) << 32
        | (b[p + 5] & 0xffL) << 40
        | (b[p + 6] & 0xffL) << 48
        | (b[p + 7] & 0xffL) << 56;
  }

  public static int readFixed32(byte[] b, int p) {
    return (b[p] & 0xff)
        | (b[p + 1] & 0xff) << 8
        | (b[p + 2] & 0xff) << 16
        | (b[p + 3] & 0xff) << 24;
  }

  public static void writeFixed64(byte[] b, int p, long v) {
    for (int i = 0; i < 8; i++) {
      b[p + i] = (byte) (v >>> (8 * i));
    }
  }

  public static void writeFixed32(byte[] b, int p, int v) {
    for (int i = 0; i < 4; i++) {
      b[p + i] = (byte) (v >>> (8 * i));
    }
  }

  public static int varintLength(long v) {
    int n = 1;
    while ((v & ~0x7fL) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }
}
