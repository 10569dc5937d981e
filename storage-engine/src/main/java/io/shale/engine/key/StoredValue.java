package io.shale.engine.key;

/**
 * A version found by a point lookup: its kind, its value bytes unless a tombstone, and the sequence
 * (under Raft, the log index) of the batch that wrote it.
 */
public record StoredValue(ValueKind kind, byte[] value, long sequence) {
  public boolean isTombstone() {
    return kind == ValueKind.TOMBSTONE;
  }
}
