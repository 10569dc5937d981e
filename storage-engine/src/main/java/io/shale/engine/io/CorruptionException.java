package io.shale.engine.io;

import java.nio.file.Path;

/**
 * A checksum, magic number, format version or structural check failed: the bytes on disk are not
 * what Shale wrote. Always names the file and the byte offset where the bad region starts, so an
 * operator can find it with a hex dump. Never retried and never turned into data.
 */
public final class CorruptionException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient Path file;
  private final long offset;

  public CorruptionException(Path file, long offset, String what) {
    super("corruption in " + file + " at offset " + offset + ": " + what);
    this.file = file;
    this.offset = offset;
  }

  public Path file() {
    return file;
  }

  public long offset() {
    return offset;
  }
}
