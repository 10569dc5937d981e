package io.shale.engine.compaction;

import io.shale.engine.concurrent.BackgroundState;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.memtable.MemtableList;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which background job runs when: flushes on one thread, in memtable order; compactions and
 * blob GC on {@code [lsm.compaction] threads} threads, chosen by {@link CompactionPicker} and
 * {@link BlobGcJob#pick}. {@link BackgroundJobs} runs them.
 *
 * <p>Invariants, under the scheduler's lock: no file is input to two running jobs (busy files);
 * when both a compaction and blob GC are due they alternate, so neither waits more than one job of
 * the other; a manual compaction runs alone; nothing starts while paused, closing or failed.
 */
public final class BackgroundScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(BackgroundScheduler.class);

  private final Path dir;
  private final JobOptions options;
  private final VersionSet versions;
  private final CompactionPicker picker;
  private final MemtableList memtables;
  private final BackgroundState state;
  private final BackgroundJobs jobs;
  private final ExecutorService flushExecutor;
  private final ExecutorService compactionExecutor;

  private final Object lock = new Object();
  private final Set<Long> busyFiles = new HashSet<>();
  private final List<Compaction> running = new ArrayList<>();
  private boolean manualCompaction;
  private boolean paused;
  private boolean lastJobWasGc;

  public BackgroundScheduler(
      Path dir,
      JobOptions options,
      VersionSet versions,
      CompactionPicker picker,
      MemtableList memtables,
      BackgroundState state,
      BackgroundJobs jobs) {
    this.dir = dir;
    this.options = options;
    this.versions = versions;
    this.picker = picker;
    this.memtables = memtables;
    this.state = state;
    this.jobs = jobs;
    this.flushExecutor = Executors.newSingleThreadExecutor(DaemonThreads.named("shale-flush"));
    this.compactionExecutor =
        Executors.newFixedThreadPool(
            options.compaction().threads(), DaemonThreads.numbered("shale-compaction"));
  }

  // ---------------------------------------------------------------------------------------------
  // Flushes

  /**
   * A memtable was sealed: flush on the flush thread. Each flush takes every memtable sealed by
   * then, so a flush scheduled for a memtable an earlier flush took finds nothing to do.
   */
  public void scheduleFlush() {
    flushExecutor.execute(this::flushSealed);
  }

  private void flushSealed() {
    List<Memtable> sealed = memtables.sealedToFlush(state::closing);
    if (sealed.isEmpty() || state.failed()) {
      return;
    }
    try {
      jobs.flush(sealed);
      memtables.flushed(sealed);
      maybeScheduleCompaction();
    } catch (IOException | RuntimeException e) {
      state.fail(
          "flush of memtables " + sealed.get(0).id() + "-" + sealed.get(sealed.size() - 1).id(), e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Compactions and blob GC

  /** Start as many due jobs as threads allow. */
  public void maybeScheduleCompaction() {
    synchronized (lock) {
      while (state.healthy()
          && !manualCompaction
          && !paused
          && running.size() < options.compaction().threads()) {
        Version v = versions.acquireCurrent();
        Compaction c = picker.pick(v, busyFiles, running, System.currentTimeMillis());
        BlobGcJob.Plan gc =
            options.blob().enabled()
                ? BlobGcJob.pick(v, options.blob().gcThresholdRatio(), busyFiles)
                : null;
        if (gc != null && (c == null || !lastJobWasGc)) {
          lastJobWasGc = true;
          Compaction marker = gcMarker(gc);
          markRunning(marker);
          busyFiles.add(gc.file().number());
          if (!submit(() -> runBlobGc(gc, marker, v))) {
            busyFiles.remove(gc.file().number());
            unmark(marker);
            v.release();
            return;
          }
          continue;
        }
        if (c == null) {
          v.release();
          return;
        }
        lastJobWasGc = false;
        markRunning(c);
        if (!submit(() -> runCompaction(c, v))) {
          unmark(c);
          v.release();
          return;
        }
      }
    }
  }

  /** False if the executor refused the job (the engine is closing). */
  private boolean submit(Runnable job) {
    try {
      compactionExecutor.execute(job);
      return true;
    } catch (RejectedExecutionException closingNow) {
      return false;
    }
  }

  /** GC holds its tables like a compaction of their levels into themselves. */
  private static Compaction gcMarker(BlobGcJob.Plan gc) {
    return new Compaction(-1, -1, gc.allTables(), List.of(), 0, CompactionReason.BLOB_GC);
  }

  private void runBlobGc(BlobGcJob.Plan plan, Compaction marker, Version v) {
    try {
      jobs.collectBlobGarbage(plan);
    } catch (IOException | RuntimeException e) {
      if (!state.closing()) {
        state.fail("garbage collection of blob file " + plan.file().number(), e);
      }
    } finally {
      v.release();
      synchronized (lock) {
        busyFiles.remove(plan.file().number());
      }
      markDone(marker);
    }
    maybeScheduleCompaction();
  }

  private void runCompaction(Compaction c, Version v) {
    try {
      jobs.compact(c, v);
    } catch (IOException | RuntimeException e) {
      if (!state.closing()) {
        state.fail("compaction of level " + c.level() + " into " + c.outputLevel(), e);
      }
    } finally {
      v.release();
      markDone(c);
    }
    maybeScheduleCompaction();
  }

  /** Precondition: holds the lock. */
  private void markRunning(Compaction c) {
    running.add(c);
    for (FileMetadata f : c.allInputs()) {
      busyFiles.add(f.number());
    }
  }

  /** Precondition: holds the lock. */
  private void unmark(Compaction c) {
    running.remove(c);
    for (FileMetadata f : c.allInputs()) {
      busyFiles.remove(f.number());
    }
  }

  private void markDone(Compaction c) {
    synchronized (lock) {
      unmark(c);
      lock.notifyAll();
    }
  }

  /**
   * Compact every key in {@code [start, end]} (nulls are unbounded) down to the deepest level that
   * holds data, on the caller's thread, once running jobs finished; automatic compactions wait
   * meanwhile. The caller flushed first.
   *
   * @param checkWritable run before each level; throws when the engine accepts no writes
   */
  public void compactRange(byte[] start, byte[] end, Runnable checkWritable) throws IOException {
    synchronized (lock) {
      while (manualCompaction) {
        waitOnLock();
      }
      manualCompaction = true;
      while (!running.isEmpty()) {
        waitOnLock();
      }
    }
    try {
      int bottom = Math.max(1, versions.current().deepestNonEmptyLevel());
      for (int level = 0; level < bottom; level++) {
        checkWritable.run();
        Version v = versions.acquireCurrent();
        Compaction c = picker.manual(v, level, start, end);
        if (c == null) {
          v.release();
          continue;
        }
        synchronized (lock) {
          markRunning(c);
        }
        try {
          jobs.compact(c, v);
        } finally {
          v.release();
          markDone(c);
        }
      }
    } finally {
      synchronized (lock) {
        manualCompaction = false;
        lock.notifyAll();
      }
      maybeScheduleCompaction();
    }
  }

  /** Start no new compaction or blob GC until {@link #resume()}; running ones finish. */
  public void pause() {
    synchronized (lock) {
      paused = true;
    }
  }

  public void resume() {
    synchronized (lock) {
      paused = false;
    }
    maybeScheduleCompaction();
  }

  public boolean paused() {
    synchronized (lock) {
      return paused;
    }
  }

  /** Compactions and blob GC jobs running now. */
  public int running() {
    synchronized (lock) {
      return running.size();
    }
  }

  /** Block until no compaction or blob GC is running or due (or none can start). */
  public void awaitIdle() {
    while (true) {
      synchronized (lock) {
        if (running.isEmpty() && !manualCompaction) {
          Version v = versions.current();
          boolean gcDue =
              options.blob().enabled()
                  && BlobGcJob.pick(v, options.blob().gcThresholdRatio(), busyFiles) != null;
          if (!state.healthy()
              || paused
              || (!gcDue
                  && picker.pick(v, busyFiles, running, System.currentTimeMillis()) == null)) {
            return;
          }
        }
        waitOnLock();
      }
      maybeScheduleCompaction();
    }
  }

  /**
   * Stop: no job starts from now on; running jobs stop at their next key (they poll the closing
   * flag). Returns once no background thread can still create or delete a file, so that another
   * engine may open the directory right after; jobs still running after a minute are interrupted,
   * and this waits on.
   */
  public void shutdown() {
    synchronized (lock) {
      state.startClosing();
    }
    flushExecutor.shutdown();
    compactionExecutor.shutdown();
    boolean interrupted = false;
    for (ExecutorService ex : List.of(flushExecutor, compactionExecutor)) {
      try {
        if (!ex.awaitTermination(1, TimeUnit.MINUTES)) {
          ex.shutdownNow();
          while (!ex.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("still waiting for background work to stop in {}", dir);
          }
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void waitOnLock() {
    try {
      lock.wait(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for compactions", e);
    }
  }
}
