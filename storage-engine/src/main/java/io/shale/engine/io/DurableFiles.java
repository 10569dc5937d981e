package io.shale.engine.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Durable file operations. A file is durable once its bytes are fsynced AND the directory entry
 * that names it is fsynced; every "create then publish" in the engine goes through here so that no
 * code path forgets the second half.
 */
public final class DurableFiles {
  private DurableFiles() {}

  /** fsync a directory so that creations, renames and deletions inside it survive a crash. */
  public static void syncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  /** Write all of {@code buf} at the channel's position, looping over short writes. */
  public static void writeFully(FileChannel ch, ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }

  /** Read exactly {@code buf.remaining()} bytes at {@code position}, or fail naming the file. */
  public static void readFully(FileChannel ch, ByteBuffer buf, long position, Path file)
      throws IOException {
    long pos = position;
    while (buf.hasRemaining()) {
      int n = ch.read(buf, pos);
      if (n < 0) {
        throw new CorruptionException(
            file, pos, "file ends before " + buf.remaining() + " more expected bytes");
      }
      pos += n;
    }
  }

  /**
   * Atomically replace {@code target} with {@code content}: write a temporary file, fsync it,
   * rename it over the target, fsync the directory. A crash leaves either the old or the new file.
   */
  public static void replaceAtomically(Path target, byte[] content) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      writeFully(ch, ByteBuffer.wrap(content));
      ch.force(true);
    }
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException("file system cannot rename atomically: " + target, e);
    }
    syncDirectory(target.getParent());
  }
}
