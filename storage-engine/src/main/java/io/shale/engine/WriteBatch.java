package io.shale.engine;

import io.shale.engine.key.KeyFormat;
import io.shale.engine.key.ValueKind;
import java.util.ArrayList;
import java.util.List;

/**
 * An atomic group of puts and deletes, applied with {@link Engine#apply}. Either every operation
 * becomes visible (at the batch's index) or none does. When a key appears twice, the later
 * operation wins. {@link #put} copies the key and value, so the caller may reuse its arrays; {@link
 * #putWithoutCopy} keeps the caller's arrays (the memtable copies them when the batch is applied,
 * so one copy is saved per value), and the caller must not change them until then.
 *
 * <p>Not thread-safe: build a batch in one thread.
 */
public final class WriteBatch {
  /** One operation. A delete has an empty value. */
  record Op(ValueKind kind, byte[] key, byte[] value) {}

  private static final byte[] EMPTY = new byte[0];
  private final List<Op> ops = new ArrayList<>();
  private long bytes;

  public WriteBatch put(byte[] key, byte[] value) {
    check(key, value);
    return add(key.clone(), value.clone());
  }

  /**
   * As {@link #put}, keeping {@code key} and {@code value} instead of copies. Precondition: the
   * caller changes neither array until {@link Engine#apply} has returned for this batch (or never
   * applies it).
   */
  public WriteBatch putWithoutCopy(byte[] key, byte[] value) {
    check(key, value);
    return add(key, value);
  }

  private WriteBatch add(byte[] key, byte[] value) {
    ops.add(new Op(ValueKind.VALUE, key, value));
    bytes += key.length + value.length;
    return this;
  }

  private static void check(byte[] key, byte[] value) {
    checkKey(key);
    if (value == null) {
      throw new IllegalArgumentException("value must not be null (use delete to remove a key)");
    }
    if (value.length > EngineOptions.MAX_VALUE_BYTES) {
      throw new IllegalArgumentException(
          "value of "
              + value.length
              + " bytes for key "
              + KeyFormat.printable(key)
              + " exceeds the limit of "
              + EngineOptions.MAX_VALUE_BYTES
              + " bytes (64 MiB)");
    }
  }

  public WriteBatch delete(byte[] key) {
    checkKey(key);
    ops.add(new Op(ValueKind.TOMBSTONE, key.clone(), EMPTY));
    bytes += key.length;
    return this;
  }

  private static void checkKey(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("key must not be null");
    }
    if (key.length > EngineOptions.MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "key of "
              + key.length
              + " bytes exceeds the limit of "
              + EngineOptions.MAX_KEY_BYTES
              + " bytes (64 KiB)");
    }
  }

  /**
   * Appends {@code other}'s operations after this batch's own (kept, not copied: the precondition
   * of {@link #putWithoutCopy} holds for them too).
   */
  public WriteBatch addAll(WriteBatch other) {
    ops.addAll(other.ops);
    bytes += other.bytes;
    return this;
  }

  public int size() {
    return ops.size();
  }

  public boolean isEmpty() {
    return ops.isEmpty();
  }

  /** Sum of key and value lengths. */
  public long byteSize() {
    return bytes;
  }

  List<Op> ops() {
    return ops;
  }
}
