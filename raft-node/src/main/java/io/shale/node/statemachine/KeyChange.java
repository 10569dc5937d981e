package io.shale.node.statemachine;

/**
 * One change an applied entry made to a user key: a put ({@code value} not null, with the key's
 * create index and version after it) or a delete (value null, create index and version 0). The
 * entry's index is the change's modification index. What watches deliver.
 */
public record KeyChange(byte[] key, byte[] value, long createIndex, long version) {
  public boolean isDelete() {
    return value == null;
  }

  /** Bytes this change holds (key and value), what the change history counts. */
  public long bytes() {
    return key.length + (value == null ? 0 : value.length);
  }
}
