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
    byte[] dst = new byte[max];
    int n = COMPRESSOR.compress(raw, 0, len, dst, 0, max);
    if (n + Varints.varintLength(len) > len - len / 8) {
      return false;
    }
    out.put(dst, 0, n);
    return true;
  }

  static byte[] lz4Decompress(byte[] block, int len) {
    Varints.Cursor c = new Varints.Cursor(block, 0, len);
    int rawLen = Varints.readVarint32(c);
    byte[] raw = new byte[rawLen];
    int n = DECOMPRESSOR.decompress(block, c.pos, len - c.pos, raw, 0, rawLen);
    if (n != rawLen) {
      throw new IllegalStateException(
          "LZ4 block decompressed to " + n + " bytes, expected " + rawLen);
    }
    return raw;
  }
}
