package io.shale.engine.version;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.engine.sstable.TableCache;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes table and blob files that no live version lists any more ({@link VersionSet} calls it
 * when the last version holding a file is released), evicting them from the caches first, on a
 * thread of its own: the last version is often released by a read (a get or a scan that began
 * before a compaction finished), and unlinking a file of tens of MiB and closing its channel can
 * take the file system tens of milliseconds while compactions write.
 *
 * <p>Invariants: a file is unlinked after its reader left the cache, so its blocks are freed here
 * and not by a read that happens to close it; deletions asked for before {@link #close} are done
 * when it returns, and none is done after. A scan or snapshot left open may release its tables
 * later, when the directory may hold another engine's files under the same numbers (a node swaps a
 * fetched checkpoint in for its engine directory); what is left behind is removed by the next open,
 * which deletes unlisted files.
 */
public final class ObsoleteFiles {
  private static final Logger LOG = LoggerFactory.getLogger(ObsoleteFiles.class);
  private static final long CLOSE_WAIT_SECONDS = 30;
  private final Path dir;
  private final TableCache tables;
  private final BlobFiles blobs;
  private final ExecutorService deleter =
      Executors.newSingleThreadExecutor(DaemonThreads.named("shale-obsolete-files"));
  private final Object idle = new Object();
  private int pending; // guarded by idle
  private volatile boolean closed;

  public ObsoleteFiles(Path dir, TableCache tables, BlobFiles blobs) {
    this.dir = dir;
    this.tables = tables;
    this.blobs = blobs;
  }

  /**
   * Finish the deletions already asked for, then delete nothing more (the engine closes); returns
   * once no deletion is in progress.
   */
  public void close() {
    closed = true;
    deleter.shutdown();
    try {
      if (!deleter.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
        LOG.warn("a file deletion in {} still runs after {} s", dir, CLOSE_WAIT_SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public void deleteTable(long number) {
    submit(
        () -> {
          tables.evict(number);
          delete(FileNames.table(dir, number), "table", number);
        });
  }

  public void deleteBlob(long number) {
    submit(
        () -> {
          blobs.evict(number);
          delete(FileNames.blob(dir, number), "blob file", number);
        });
  }

  /** Block until every deletion asked for so far is done. */
  public void awaitIdle() throws InterruptedException {
    synchronized (idle) {
      while (pending > 0) {
        idle.wait();
      }
    }
  }

  private void submit(Runnable deletion) {
    if (closed) {
      return;
    }
    synchronized (idle) {
      pending++;
    }
    try {
      deleter.execute(
          () -> {
            try {
              deletion.run();
            } finally {
              done();
            }
          });
    } catch (RejectedExecutionException e) {
      done(); // closed meanwhile
    }
  }

  private void done() {
    synchronized (idle) {
      if (pending > 0) {
        pending--;
      }
      if (pending == 0) {
        idle.notifyAll();
      }
    }
  }

  private void delete(Path file, String kind, long number) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // Left behind; the next open removes files no version lists.
      LOG.warn("could not delete obsolete {} {} in {}: {}", kind, number, dir, e.toString());
    }
  }
}
