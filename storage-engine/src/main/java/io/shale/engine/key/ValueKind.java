package io.shale.engine.key;

/**
 * What an entry holds. The code is stored in the low byte of an internal key's trailer and never
 * changes meaning; new kinds (a blob pointer) take new codes.
 */
public enum ValueKind {
  /** A deletion marker: hides older versions of the key until compaction drops it. */
  TOMBSTONE(0),
  /** The value bytes are stored inline, next to the key. */
  VALUE(1),
  /** The value lives in a blob file; the entry holds an encoded {@code BlobPointer}. */
  BLOB_POINTER(2);

  private final int code;

  ValueKind(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /**
   * @return the kind for {@code code}, or {@code null} if no kind has that code.
   */
  public static ValueKind fromCode(int code) {
    switch (code) {
      case 0:
        return TOMBSTONE;
      case 1:
        return VALUE;
      case 2:
        return BLOB_POINTER;
      default:
        return null;
    }
  }
}
