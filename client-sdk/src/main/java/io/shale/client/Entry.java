package io.shale.client;

import java.nio.charset.StandardCharsets;

/**
 * A key with its value and the Raft index of the write that last modified it (etcd's mod_revision;
 * 0 in scans, which do not report it, and in keys-only scans the value is empty). The arrays are
 * the client's own copies; callers may keep them.
 */
public record Entry(byte[] key, byte[] value, long modIndex) {
  public String keyUtf8() {
    return new String(key, StandardCharsets.UTF_8);
  }

  public String valueUtf8() {
    return new String(value, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "Entry[" + keyUtf8() + " = " + value.length + " bytes, modIndex " + modIndex + "]";
  }
}
