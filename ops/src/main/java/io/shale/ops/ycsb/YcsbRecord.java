package io.shale.ops.ycsb;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A YCSB record (field name to bytes) as one Shale value: a field count, then per field its name's
 * length and UTF-8 bytes and its value's length and bytes, lengths as 4-byte big-endian ints.
 */
final class YcsbRecord {
  private YcsbRecord() {}

  static byte[] encode(Map<String, byte[]> fields) {
    int size = 4;
    for (Map.Entry<String, byte[]> f : fields.entrySet()) {
      size += 8 + f.getKey().getBytes(StandardCharsets.UTF_8).length + f.getValue().length;
    }
    ByteBuffer b = ByteBuffer.allocate(size).putInt(fields.size());
    for (Map.Entry<String, byte[]> f : fields.entrySet()) {
      byte[] name = f.getKey().getBytes(StandardCharsets.UTF_8);
      b.putInt(name.length).put(name).putInt(f.getValue().length).put(f.getValue());
    }
    return b.array();
  }

  /**
   * The fields of {@code value}, in their stored order.
   *
   * @throws IllegalArgumentException if {@code value} is not an encoded record
   */
  static Map<String, byte[]> decode(byte[] value) {
    try {
      ByteBuffer b = ByteBuffer.wrap(value);
      int n = b.getInt();
      if (n < 0 || n > value.length) {
        throw new IllegalArgumentException("a YCSB record of " + n + " fields");
      }
      Map<String, byte[]> out = new LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        byte[] name = new byte[b.getInt()];
        b.get(name);
        byte[] v = new byte[b.getInt()];
        b.get(v);
        out.put(new String(name, StandardCharsets.UTF_8), v);
      }
      if (b.hasRemaining()) {
        throw new IllegalArgumentException(b.remaining() + " bytes after the last field");
      }
      return out;
    } catch (java.nio.BufferUnderflowException | NegativeArraySizeException e) {
      throw new IllegalArgumentException("not a YCSB record (" + value.length + " bytes)", e);
    }
  }
}
