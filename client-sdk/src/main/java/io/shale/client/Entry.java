package io.shale.client;

import java.nio.charset.StandardCharsets;

/**
 * A key with its value and revisions: the Raft index of the write that last modified it (etcd's
 * mod_revision), of the put that created it (create_revision) and its version (puts since it was
 * created). Scans report none of the three (0), and in keys-only scans the value is empty. The
 * arrays are the client's own copies; callers may keep them.
 */
public record Entry(byte[] key, byte[] value, long modIndex, long createIndex, long version) {
  /** An entry whose create index and version were not reported (0). */
  public Entry(byte[] key, byte[] value, long modIndex) {
    this(key, value, modIndex, 0, 0);
  }

  public String keyUtf8() {
    return new String(key, StandardCharsets.UTF_8);
  }

  public String valueUtf8() {
    return new String(value, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "Entry["
        + keyUtf8()
        + " = "
        + value.length
        + " bytes, modIndex "
        + modIndex
        + ", createIndex "
        + createIndex
        + ", version "
        + version
        + "]";
  }
}
