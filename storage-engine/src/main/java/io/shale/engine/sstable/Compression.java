package io.shale.engine.sstable;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Varints;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Block compression. The code is stored in every block trailer, so tables written with different
 * settings can be read by the same engine. An LZ4 block is {@code raw-length varint | lz4 bytes}.
 */
public enum Compression {
  NONE(0),
  LZ4(1);

  private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
  private static final LZ4Compressor COMPRESSOR = FACTORY.fastCompressor();
  // The "safe" decompressor: bounds-checked, and in lz4-java 1.10 the one the JNI factory backs
  // with native code (its "fast" decompressor is pure Java).
  private static final LZ4SafeDecompressor DECOMPRESSOR = FACTORY.safeDecompressor();

  /** A block holds at most one entry past its target size, and a value is at most 64 MiB. */
  static final int MAX_RAW_BLOCK_BYTES = 128 << 20;

  private final int code;

  Compression(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  public static Compression fromCode(int code) {
    for (Compression c : values()) {
      if (c.code == code) {
        return c;
      }
    }
    return null;
  }

  /** Parse the TOML spelling ("none", "lz4"); null if unknown. */
  public static Compression fromName(String name) {
    for (Compression c : values()) {
      if (c.name().equalsIgnoreCase(name)) {
        return c;
      }
    }
    return null;
  }

  /**
   * Compress {@code raw[0, len)} into {@code out} (reset first).
   *
   * @return false if compression did not save at least 1/8 of the bytes, in which case the caller
   *     stores the block uncompressed (reads of incompressible data then skip LZ4)
   */
  static boolean lz4Compress(byte[] raw, int len, ByteSink out) {
    out.reset();
    out.putVarint(len);
    int max = COMPRESSOR.maxCompressedLength(len);
    byte[] dst = out.reserve(max); // in place: no buffer per block
    int n = COMPRESSOR.compress(raw, 0, len, dst, out.size(), max);
    if (n + Varints.varintLength(len) > len - len / 8) {
      return false;
    }
    out.advance(n);
    return true;
  }

  /** The decoded length of the LZ4 block {@code block[0, len)}, from its header. */
  static int lz4RawLength(byte[] block, int len) {
    int rawLen = Varints.readVarint32(new Varints.Cursor(block, 0, len));
    if (rawLen < 0 || rawLen > MAX_RAW_BLOCK_BYTES) {
      throw new IllegalStateException(
          "LZ4 block claims " + rawLen + " decoded bytes (at most " + MAX_RAW_BLOCK_BYTES + ")");
    }
    return rawLen;
  }

  /**
   * Decompress the LZ4 block {@code block[0, len)} into {@code into[0, rawLength)}, where {@code
   * into} holds at least {@link #lz4RawLength} bytes; returns that length.
   */
  static int lz4Decompress(byte[] block, int len, byte[] into) {
    Varints.Cursor c = new Varints.Cursor(block, 0, len);
    int rawLen = Varints.readVarint32(c);
    int n = DECOMPRESSOR.decompress(block, c.pos, len - c.pos, into, 0, rawLen);
    if (n != rawLen) {
      throw new IllegalStateException(
          "LZ4 block decompressed to " + n + " bytes, expected " + rawLen);
    }
    return rawLen;
  }
}
