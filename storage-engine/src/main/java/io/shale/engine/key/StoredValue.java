package io.shale.engine.key;

/** A version found by a point lookup: its kind and, unless a tombstone, its value bytes. */
public record StoredValue(ValueKind kind, byte[] value) {
  public boolean isTombstone() {
    return kind == ValueKind.TOMBSTONE;
  }
}
