package io.shale.engine.blob;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Varints;

/** Where a separated value lives: blob file, offset and length of the value, its CRC32C. */
public record BlobPointer(long fileNumber, long offset, int length, int crc) {
  public byte[] encode() {
    ByteSink s = new ByteSink(24);
    s.putVarint(fileNumber).putVarint(offset).putVarint(length).putFixed32(crc);
    return s.toByteArray();
  }

  /** Decode; IllegalStateException if malformed (the caller names the table and offset). */
  public static BlobPointer decode(byte[] b) {
    return decode(b, 0, b.length);
  }

  /** Decode {@code b[from, from + length)}; IllegalStateException if malformed. */
  public static BlobPointer decode(byte[] b, int from, int length) {
    Varints.Cursor c = new Varints.Cursor(b, from, from + length);
    long file = Varints.readVarint64(c);
    long offset = Varints.readVarint64(c);
    int valueLength = Varints.readVarint32(c);
    if (c.pos + 4 != from + length) {
      throw new IllegalStateException("blob pointer of " + length + " bytes is malformed");
    }
    return new BlobPointer(file, offset, valueLength, Varints.readFixed32(b, c.pos));
  }
}
