package io.shale.node.watch;

import java.util.Arrays;

/**
 * The keys a watch sees: [start, end) in unsigned byte order, end null for "to the last key". One
 * key is [key, key + 0x00), a prefix [prefix, the first key past every key it begins).
 */
public record KeyFilter(byte[] start, byte[] end) {
  public static KeyFilter key(byte[] key) {
    byte[] end = Arrays.copyOf(key, key.length + 1);
    return new KeyFilter(key, end);
  }

  public static KeyFilter prefix(byte[] prefix) {
    byte[] end = prefix.clone();
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xff) {
        end[i]++;
        return new KeyFilter(prefix, Arrays.copyOf(end, i + 1));
      }
    }
    return new KeyFilter(prefix, null); // all 0xff bytes (or empty): every key from it on
  }

  public boolean accepts(byte[] key) {
    return Arrays.compareUnsigned(key, start) >= 0
        && (end == null || Arrays.compareUnsigned(key, end) < 0);
  }
}
