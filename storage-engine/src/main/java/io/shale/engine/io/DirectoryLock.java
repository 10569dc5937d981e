package io.shale.engine.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a directory (a {@code LOCK} file held with an OS file lock), so that two
 * engines, in one process or two, never write the same files. Released by {@link #close()} or by
 * the process's exit.
 */
public final class DirectoryLock implements AutoCloseable {
  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Create {@code dir} if needed and lock it through {@code dir/lockFileName}.
   *
   * @throws IllegalStateException if another holder has it
   */
  public static DirectoryLock acquire(Path dir, String lockFileName) throws IOException {
    Files.createDirectories(dir);
    FileChannel channel =
        FileChannel.open(
            dir.resolve(lockFileName), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      throw new IllegalStateException("engine directory " + dir + " is in use by another engine");
    }
    return new DirectoryLock(channel, lock);
  }

  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      channel.close();
    }
  }
}
