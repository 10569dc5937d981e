package io.shale.engine.io;

import java.util.zip.CRC32C;

/** CRC32C, the checksum of every Shale file format (hardware-accelerated on x86 and ARM). */
public final class Checksums {
  private Checksums() {}

  public static int crc32c(byte[] data, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(data, offset, length);
    return (int) crc.getValue();
  }

  /** CRC32C of {@code data[offset, offset+length)} followed by one extra byte. */
  public static int crc32c(byte[] data, int offset, int length, byte extra) {
    CRC32C crc = new CRC32C();
    crc.update(data, offset, length);
    crc.update(extra);
    return (int) crc.getValue();
  }
}
