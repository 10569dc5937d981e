package io.shale.node.statemachine;

/**
 * One change an applied entry made to a user key: a put ({@code value} not null, with the key's
 * create index and version after it) or a delete (value null, create index and version 0). The
 * entry's index is the change's modification index. What watches deliver.
 *
 * @param previous the key as it was before the change, when the applier was asked to capture it
 *     ({@link AppliedChanges#previousValues}) and the key existed; else null
 */
public record KeyChange(
    byte[] key, byte[] value, long createIndex, long version, Previous previous) {
  /** A key's value and revisions before a change. */
  public record Previous(byte[] value, long modIndex, long createIndex, long version) {}

  public KeyChange(byte[] key, byte[] value, long createIndex, long version) {
    this(key, value, createIndex, version, null);
  }

  public boolean isDelete() {
    return value == null;
  }

  /** Bytes this change holds (key, value, previous value), what the change history counts. */
  public long bytes() {
    return key.length
        + (value == null ? 0 : value.length)
        + (previous == null ? 0 : previous.value().length);
  }
}
