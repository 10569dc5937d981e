package io.shale.engine;

/**
 * A range scan: keys in {@code [start, end)} (null bounds are unbounded), at most {@code limit}
 * keys ({@code 0} = no limit), ascending or, if {@code reverse}, descending; {@code keysOnly} skips
 * reading values.
 */
public record ScanOptions(byte[] start, byte[] end, long limit, boolean reverse, boolean keysOnly) {
  public ScanOptions {
    if (limit < 0) {
      throw new IllegalArgumentException(
          "scan limit must be >= 0 (0 means no limit), got " + limit);
    }
    start = start == null ? null : start.clone();
    end = end == null ? null : end.clone();
  }

  /** Every key, ascending. */
  public static ScanOptions all() {
    return new ScanOptions(null, null, 0, false, false);
  }

  /** Keys in {@code [start, end)}, ascending. */
  public static ScanOptions range(byte[] start, byte[] end) {
    return new ScanOptions(start, end, 0, false, false);
  }

  public ScanOptions withLimit(long n) {
    return new ScanOptions(start, end, n, reverse, keysOnly);
  }

  public ScanOptions reversed() {
    return new ScanOptions(start, end, limit, !reverse, keysOnly);
  }

  public ScanOptions withKeysOnly() {
    return new ScanOptions(start, end, limit, reverse, true);
  }
}
