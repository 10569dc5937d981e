package io.shale.client;

import java.nio.charset.StandardCharsets;

/**
 * A key with its value and the Raft index of the write that last modified it (0 in scans, which
 * do not report it).
 */
public record Entry(byte[] key, byte[] value, long modIndex) {
  public String keyUtf8() {
    return new String(key, StandardCharsets.UTF_8);
  }

  public String valueUtf8() {
    return new String(value, StandardCharsets.UTF_8);
  }
}
