package io.shale.engine.io;

import java.util.Arrays;

/**
 * A growable byte buffer for building blocks and records. Reused across blocks ({@link #reset}) so
 * that writing a table does not allocate per entry.
 */
public final class ByteSink {
  private byte[] buf;
  private int size;

  public ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  public int size() {
    return size;
  }

  public byte[] array() {
    return buf;
  }

  public void reset() {
    size = 0;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  private void ensure(int extra) {
    if (size + extra > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + extra));
    }
  }

  /**
   * Make room for {@code bytes} more bytes and return the array to write them into, at {@link
   * #size()}; {@link #advance} then claims what was written. Lets a codec write in place.
   */
  public byte[] reserve(int bytes) {
    ensure(bytes);
    return buf;
  }

  /** Claim {@code bytes} written into the array {@link #reserve} returned. */
  public void advance(int bytes) {
    if (bytes < 0 || size + bytes > buf.length) {
      throw new IllegalArgumentException(
          "cannot claim " + bytes + " bytes at " + size + " of " + buf.length);
    }
    size += bytes;
  }

  public ByteSink put(byte b) {
    ensure(1);
    buf[size++] = b;
    return this;
  }

  public ByteSink put(byte[] b) {
    return put(b, 0, b.length);
  }

  public ByteSink put(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, size, len);
    size += len;
    return this;
  }

  public ByteSink putVarint(long v) {
    ensure(10);
    while ((v & ~0x7fL) != 0) {
      buf[size++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    buf[size++] = (byte) v;
    return this;
  }

  public ByteSink putFixed32(int v) {
    ensure(4);
    Varints.writeFixed32(buf, size, v);
    size += 4;
    return this;
  }

  public ByteSink putFixed64(long v) {
    ensure(8);
    Varints.writeFixed64(buf, size, v);
    size += 8;
    return this;
  }

  /** A length-prefixed byte string. */
  public ByteSink putBytes(byte[] b) {
    putVarint(b.length);
    return put(b);
  }
}
