package io.shale.client;

import java.nio.charset.StandardCharsets;

/**
 * What a compare-and-set expects of its key: a value, absence, or the modification index of the
 * write that last changed it (the cheapest test for read-modify-write: compare an index, not a
 * value that may be megabytes long).
 */
public final class Expectation {
  enum Kind {
    VALUE,
    ABSENT,
    MOD_INDEX
  }

  final Kind kind;
  final byte[] value;
  final long modIndex;

  private Expectation(Kind kind, byte[] value, long modIndex) {
    this.kind = kind;
    this.value = value;
    this.modIndex = modIndex;
  }

  /** The key's value equals {@code value}. */
  public static Expectation value(byte[] value) {
    if (value == null) {
      throw new IllegalArgumentException("expected value is null; use Expectation.absent()");
    }
    return new Expectation(Kind.VALUE, value.clone(), 0);
  }

  /** The key's value equals {@code value} in UTF-8. */
  public static Expectation value(String value) {
    return value(value.getBytes(StandardCharsets.UTF_8));
  }

  /** The key does not exist. */
  public static Expectation absent() {
    return new Expectation(Kind.ABSENT, null, 0);
  }

  /**
   * The key was last modified by the write at {@code modIndex} (from {@link Entry#modIndex()}); 0
   * means absent.
   */
  public static Expectation modIndex(long modIndex) {
    if (modIndex < 0) {
      throw new IllegalArgumentException("modIndex must not be negative, got " + modIndex);
    }
    return new Expectation(Kind.MOD_INDEX, null, modIndex);
  }

  @Override
  public String toString() {
    return switch (kind) {
      case VALUE -> "value of " + value.length + " bytes";
      case ABSENT -> "absent";
      case MOD_INDEX -> "modIndex " + modIndex;
    };
  }
}
