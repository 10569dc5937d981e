package io.shale.engine.sstable;

import io.shale.engine.io.Checksums;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.io.Varints;
import java.nio.file.Path;

/** The fixed-size tail of a table: where the index, filter and properties blocks are. */
record Footer(BlockHandle index, BlockHandle filter, BlockHandle properties) {
  static final int SIZE = 64;
  static final long MAGIC = 0x5348414c45535354L; // "SHALESST"
  static final int FORMAT_VERSION = 1;

  byte[] encode() {
    byte[] b = new byte[SIZE];
    put(b, 0, index);
    put(b, 16, filter);
    put(b, 32, properties);
    Varints.writeFixed32(b, 48, FORMAT_VERSION);
    Varints.writeFixed32(b, 52, Checksums.crc32c(b, 0, 52));
    Varints.writeFixed64(b, 56, MAGIC);
    return b;
  }

  private static void put(byte[] b, int p, BlockHandle h) {
    Varints.writeFixed64(b, p, h.offset());
    Varints.writeFixed64(b, p + 8, h.size());
  }

  static Footer decode(byte[] b, Path file, long fileOffset, long fileSize) {
    if (Varints.readFixed64(b, 56) != MAGIC) {
      throw new CorruptionException(file, fileOffset + 56, "not a Shale table (bad magic number)");
    }
    if (Checksums.crc32c(b, 0, 52) != Varints.readFixed32(b, 52)) {
      throw new CorruptionException(file, fileOffset, "footer checksum mismatch");
    }
    int version = Varints.readFixed32(b, 48);
    if (version != FORMAT_VERSION) {
      throw new CorruptionException(
          file, fileOffset + 48, "unsupported table format version " + version);
    }
    BlockHandle[] hs = new BlockHandle[3];
    for (int i = 0; i < 3; i++) {
      long off = Varints.readFixed64(b, i * 16);
      long size = Varints.readFixed64(b, i * 16 + 8);
      if (off < 0
          || size < 0
          || size > Integer.MAX_VALUE
          || off + size + BlockHandle.TRAILER_SIZE > fileSize - SIZE) {
        throw new CorruptionException(file, fileOffset + i * 16L, "block handle out of bounds");
      }
      hs[i] = new BlockHandle(off, (int) size);
    }
    return new Footer(hs[0], hs[1], hs[2]);
  }
}
