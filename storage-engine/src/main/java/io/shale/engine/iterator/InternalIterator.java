package io.shale.engine.iterator;

import io.shale.engine.key.ValueKind;

/**
 * A cursor over internal entries in one {@link Direction}. Not thread-safe: one reader at a time.
 *
 * <p>{@link #seek} means "first entry at or after target" in the iterator's direction: forward, the
 * first entry whose user key is {@code >= target}; reverse, the first entry whose user key is
 * {@code < target} (an exclusive upper bound, which is what a reverse range scan starts from).
 * Accessors may only be called while {@link #valid()}.
 */
public interface InternalIterator extends AutoCloseable {
  boolean valid();

  /** Position at the first entry in this direction (forward: smallest key; reverse: largest). */
  void seekToFirst();

  void seek(byte[] target);

  void next();

  byte[] userKey();

  long sequence();

  ValueKind kind();

  /** The value bytes; may copy, so callers that only need keys should not call it. */
  byte[] value();

  /**
   * The value without a copy where the source allows it (a table block); valid only until this
   * iterator moves. Callers that keep the value use {@link #value()}.
   */
  default ValueSlice valueSlice() {
    return ValueSlice.of(value());
  }

  @Override
  void close();
}
