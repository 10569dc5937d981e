package io.shale.engine.sstable;

/** Where a block's contents live in a table file; {@code size} excludes the 5-byte trailer. */
public record BlockHandle(long offset, int size) {
  public static final int TRAILER_SIZE = 5;
}
