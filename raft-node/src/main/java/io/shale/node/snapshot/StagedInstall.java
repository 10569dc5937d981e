package io.shale.node.snapshot;

import io.shale.engine.io.DurableFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fetched checkpoint waiting to replace the engine directory, and the swap itself.
 *
 * <p>Directories beside {@code engine}: {@code install-tmp} while files arrive, {@code
 * install-ready} once all are in and synced (the rename is the commit point), and {@code
 * engine-old} during the swap. The swap is two renames; {@link #recover} finishes whatever a crash
 * interrupted, before the engine is opened:
 *
 * <ul>
 *   <li>{@code install-ready}, with or without {@code engine}: the staged checkpoint is swapped in.
 *       Ratis may already have been told the install is done (in notification mode it records the
 *       install, and purges its log up to it, just before the reload that swaps); an engine left
 *       behind that index would then miss the entries the log no longer holds. If Ratis had not
 *       been told, the checkpoint is still committed state past the engine (a follower in install
 *       takes no entries), so opening it is as good as the install;
 *   <li>{@code install-tmp} and {@code engine-old} are always leftovers, deleted.
 * </ul>
 *
 * <p>A fetch ({@link #stage}) and a swap never overlap: Ratis may ask for the next install while it
 * still reloads the state machine after the last one, and a reload's cleanup deleting {@code
 * install-tmp} under a second fetch fails the state machine (StagedInstallTest;
 * docs/postmortems/06). A swap waits for a fetch in progress and swaps in what it staged. {@link
 * #recover} is for start-up only, before any fetch.
 */
public final class StagedInstall {
  private final Path engineDir;
  private final Path tmp;
  private final Path ready;
  private final Path old;

  /** Held by a fetch from its first file to {@code install-ready}, and by a swap. */
  private final ReentrantLock lock = new ReentrantLock();

  /** What a fetch does with the empty directory it fills. */
  @FunctionalInterface
  public interface Fill<T> {
    T into(Path dir) throws IOException;
  }

  public StagedInstall(Path engineDir) {
    this.engineDir = engineDir;
    Path parent = engineDir.toAbsolutePath().getParent();
    this.tmp = parent.resolve("install-tmp");
    this.ready = parent.resolve("install-ready");
    this.old = parent.resolve("engine-old");
  }

  /**
   * Fills an empty {@code install-tmp} and marks it complete ({@code install-ready}); the files
   * must be synced by {@code fill}. A swap meanwhile waits.
   */
  public <T> T stage(Fill<T> fill) throws IOException {
    lock.lock();
    try {
      CheckpointStore.deleteTree(tmp);
      Files.createDirectories(tmp);
      T result = fill.into(tmp);
      DurableFiles.syncDirectory(tmp);
      CheckpointStore.deleteTree(ready);
      Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(ready.getParent());
      return result;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Drops a staged checkpoint (and any partial one) that will not be swapped in: its fetch was
   * given up after it ended (see {@link LeaderWatch}).
   */
  public void discard() throws IOException {
    lock.lock();
    try {
      CheckpointStore.deleteTree(ready);
      CheckpointStore.deleteTree(tmp);
    } finally {
      lock.unlock();
    }
  }

  /** Whether a complete fetched checkpoint waits to be swapped in. */
  public boolean isReady() {
    return Files.isDirectory(ready);
  }

  /**
   * Replaces the engine directory by the staged checkpoint. Precondition: the engine is closed.
   *
   * @return false if nothing was staged
   */
  public boolean swap() throws IOException {
    lock.lock();
    try {
      if (!isReady()) {
        return false;
      }
      CheckpointStore.deleteTree(old);
      if (Files.exists(engineDir)) {
        Files.move(engineDir, old, StandardCopyOption.ATOMIC_MOVE);
      }
      Files.move(ready, engineDir, StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(engineDir.toAbsolutePath().getParent());
      CheckpointStore.deleteTree(old);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Finishes an install a crash interrupted (see the class comment). Precondition: the node is
   * starting, so no fetch runs.
   */
  public void recover() throws IOException {
    swap();
    CheckpointStore.deleteTree(tmp);
    CheckpointStore.deleteTree(old);
  }
}
