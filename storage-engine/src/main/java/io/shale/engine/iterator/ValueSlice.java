package io.shale.engine.iterator;

/**
 * A value as a view: {@code array[offset, offset + length)}. The array belongs to the iterator that
 * returned it: read-only, and valid only until that iterator moves. Lets a compaction copy a value
 * from its input block straight into its output block.
 */
public record ValueSlice(byte[] array, int offset, int length) {
  /** The whole of {@code value}. */
  public static ValueSlice of(byte[] value) {
    return new ValueSlice(value, 0, value.length);
  }

  /** A copy the caller owns. */
  public byte[] copy() {
    return java.util.Arrays.copyOfRange(array, offset, offset + length);
  }
}
