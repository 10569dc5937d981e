package io.shale.node.snapshot;

import io.shale.engine.io.DurableFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A fetched checkpoint waiting to replace the engine directory, and the swap itself.
 *
 * <p>Directories beside {@code engine}: {@code install-tmp} while files arrive,
 * {@code install-ready} once all are in and synced (the rename is the commit point), and
 * {@code engine-old} during the swap. The swap is two renames; {@link #recover} finishes or
 * discards whatever a crash interrupted, before the engine is opened:
 * <ul>
 *   <li>no {@code engine} but {@code install-ready}: the crash came between the renames, so the
 *       install is completed;</li>
 *   <li>{@code engine} and {@code install-ready}: Ratis never learnt of the install (it reloads
 *       the state machine only after the swap), so the staged copy is dropped and the leader
 *       will offer the snapshot again;</li>
 *   <li>{@code install-tmp} and {@code engine-old} are always leftovers, deleted.</li>
 * </ul>
 */
public final class StagedInstall {
  private final Path engineDir;
  private final Path tmp;
  private final Path ready;
  private final Path old;

  public StagedInstall(Path engineDir) {
    this.engineDir = engineDir;
    Path parent = engineDir.toAbsolutePath().getParent();
    this.tmp = parent.resolve("install-tmp");
    this.ready = parent.resolve("install-ready");
    this.old = parent.resolve("engine-old");
  }

  /** An empty directory to fetch into. */
  Path begin() throws IOException {
    CheckpointStore.deleteTree(tmp);
    Files.createDirectories(tmp);
    return tmp;
  }

  /** Marks the fetched files complete (they are synced by the fetcher). */
  void ready() throws IOException {
    DurableFiles.syncDirectory(tmp);
    CheckpointStore.deleteTree(ready);
    Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
    DurableFiles.syncDirectory(ready.getParent());
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
  }

  /** Finishes or discards an interrupted install (see the class comment). */
  public void recover() throws IOException {
    if (!Files.exists(engineDir) && isReady()) {
      Files.move(ready, engineDir, StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(engineDir.toAbsolutePath().getParent());
    }
    CheckpointStore.deleteTree(ready);
    CheckpointStore.deleteTree(tmp);
    CheckpointStore.deleteTree(old);
  }
}
