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
    Varints.Cursor c = new Varints.Cursor(b, 0, b.length);
    long file = Varints.readVarint64(c);
    long offset = Varints.readVarint64(c);
    int length = Varints.readVarint32(c);
    if (c.pos + 4 != b.length) {
      throw new IllegalStateException("blob pointer of " + b.length + " bytes is malformed");
    }
    return new BlobPointer(file, offset, length, Varints.readFixed32(b, c.pos));
  }
}
