package io.shale.client.backup;

import java.io.IOException;
import java.nio.file.Path;

/** A backup's byte that is not what its manifest says: names the file and the offset. */
public final class BackupCorruptException extends IOException {
  private final Path file;
  private final long offset;

  public BackupCorruptException(Path file, long offset, String what) {
    super(file + " at offset " + offset + ": " + what);
    this.file = file;
    this.offset = offset;
  }

  public Path file() {
    return file;
  }

  /** The first byte of the damaged block (or of the damaged item). */
  public long offset() {
    return offset;
  }
}
