package io.shale.engine.memtable;

import io.shale.engine.key.Keys;
import io.shale.engine.version.VersionSet;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * The engine's memtables (one mutable, the sealed ones waiting for flush, oldest first), the
 * applied index, the {@link ReadState} readers start from, and the {@link ChunkPool} the memtables'
 * arenas share.
 *
 * <p>Invariants, all under the list's lock: indexes are applied in strictly increasing order; at
 * most {@code maxImmutable} sealed memtables wait for flush (a writer blocks meanwhile); the
 * published read state always lists exactly the current memtables and the current version. Readers
 * take no lock: they read the volatile state and the applied index, then re-check the state (see
 * {@link #acquire}).
 */
public final class MemtableList {
  /** Called back by the list; runs under the list's lock. */
  public interface Listener {
    /** A memtable was sealed and waits for flush. */
    void sealed();

    /** The memtables or the version changed (recompute what depends on them, e.g. pressure). */
    void changed();
  }

  private final Object lock = new Object();
  private final VersionSet versions;
  private final long memtableBytes;
  private final int maxImmutable;
  private final Runnable checkWritable;
  private final ChunkPool chunks;
  private Listener listener;
  private Memtable mutable;
  private final ArrayDeque<Memtable> immutables = new ArrayDeque<>();
  private long nextMemtableId;
  private volatile ReadState readState;
  private volatile long lastApplied;
  private volatile boolean flushesPaused;

  /**
   * @param checkWritable throws when the engine accepts no writes (closed, or failed)
   */
  public MemtableList(
      VersionSet versions, long memtableBytes, int maxImmutable, Runnable checkWritable) {
    this.versions = versions;
    this.memtableBytes = memtableBytes;
    this.maxImmutable = maxImmutable;
    this.checkWritable = checkWritable;
    this.lastApplied = versions.persistedAppliedIndex();
    this.chunks = ChunkPool.forMemtables(memtableBytes, maxImmutable + 1);
    this.mutable = new Memtable(nextMemtableId++, chunks);
    this.readState = new ReadState(mutable, List.of(), versions.acquireCurrent());
  }

  /** Precondition: called once, before the first write. */
  public void setListener(Listener listener) {
    this.listener = listener;
  }

  /** Run {@code r} under the list's lock (so that it sees memtables and version consistently). */
  public void locked(Runnable r) {
    synchronized (lock) {
      r.run();
    }
  }

  /** Wake every thread waiting on the list (a flush finished, or background work stopped). */
  public void wakeWaiters() {
    synchronized (lock) {
      lock.notifyAll();
    }
  }

  /**
   * Add every operation of a batch at {@code index}; waits while {@code maxImmutable} sealed
   * memtables wait for flush, as the last bound on memory.
   */
  public void apply(long index, Consumer<Memtable> ops) {
    synchronized (lock) {
      checkWritable.run();
      if (index <= lastApplied) {
        throw new IllegalArgumentException(
            "index " + index + " does not increase: the last applied " + "index is " + lastApplied);
      }
      if (index > Keys.MAX_SEQUENCE) {
        throw new IllegalArgumentException(
            "index " + index + " exceeds the maximum " + Keys.MAX_SEQUENCE);
      }
      while (immutables.size() >= maxImmutable) {
        waitOnLock(100);
        checkWritable.run();
      }
      ops.accept(mutable);
      mutable.markApplied(index);
      lastApplied = index;
      if (mutable.approximateBytes() >= memtableBytes) {
        sealMutable();
      }
    }
  }

  /**
   * Seal the mutable memtable if it holds anything not yet durable, then wait until every sealed
   * memtable is flushed.
   */
  public void sealAndAwaitFlush() {
    synchronized (lock) {
      checkWritable.run();
      if (mutableHoldsUndurable()) {
        sealMutable();
      }
      while (!immutables.isEmpty()) {
        checkWritable.run();
        waitOnLock(100);
      }
      checkWritable.run();
    }
  }

  /**
   * Seal the mutable memtable if it holds anything not yet durable and no sealed memtable is still
   * waiting for its flush (that flush comes first); never waits. A flush follows soon.
   */
  public void requestFlush() {
    synchronized (lock) {
      checkWritable.run();
      if (immutables.isEmpty() && mutableHoldsUndurable()) {
        sealMutable();
      }
    }
  }

  /**
   * Whether the mutable memtable holds entries or an applied index past the durable one (an applied
   * entry that wrote nothing still moves the index a flush records). Precondition: holds the lock.
   */
  private boolean mutableHoldsUndurable() {
    return !mutable.isEmpty() || mutable.largestSequence() > versions.persistedAppliedIndex();
  }

  /** Precondition: holds the lock. */
  private void sealMutable() {
    immutables.addLast(mutable);
    mutable = new Memtable(nextMemtableId++, chunks);
    publishLocked();
    listener.changed();
    listener.sealed();
  }

  /**
   * Every sealed memtable, oldest first, once flushes are not paused; empty if none (or
   * interrupted, or {@code stop} says so while paused). One flush writes them all.
   */
  public List<Memtable> sealedToFlush(java.util.function.BooleanSupplier stop) {
    synchronized (lock) {
      while (flushesPaused && !stop.getAsBoolean()) {
        try {
          lock.wait(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return List.of();
        }
      }
      return List.copyOf(immutables);
    }
  }

  /**
   * {@code flushed}, the oldest sealed memtables in order, are durable in the current version: drop
   * them.
   */
  public void flushed(List<Memtable> flushed) {
    synchronized (lock) {
      int i = 0;
      for (Memtable m : immutables) {
        if (i == flushed.size()) {
          break;
        }
        if (flushed.get(i) != m) {
          throw new IllegalStateException(
              "memtable " + flushed.get(i).id() + " is not the oldest sealed one left");
        }
        i++;
      }
      if (i != flushed.size()) {
        throw new IllegalStateException("flushed memtables are no longer sealed and waiting");
      }
      for (Memtable m : flushed) {
        immutables.removeFirst();
      }
      publishLocked();
      for (Memtable m : flushed) {
        m.release(); // the list's own reference: chunks are recycled once readers let go too
      }
      listener.changed(); // before waking writers: they see the pressure of the new state
      lock.notifyAll();
    }
  }

  /** Publish a read state with the current version (after a version was installed). */
  public void publish() {
    synchronized (lock) {
      publishLocked();
    }
  }

  private void publishLocked() {
    List<Memtable> newestFirst = new ArrayList<>(immutables);
    Collections.reverse(newestFirst);
    ReadState old = readState;
    readState = new ReadState(mutable, newestFirst, versions.acquireCurrent());
    old.release();
  }

  /**
   * A retained read state and, in {@code sequenceOut[0]}, the index to read it at. Re-reading the
   * state after the index proves that no memtable switch or version install happened in between, so
   * every batch up to the index is in this state and no table in it holds a newer one.
   */
  public ReadState acquire(long[] sequenceOut, Runnable ensureOpen) {
    while (true) {
      ensureOpen.run();
      ReadState rs = readState;
      long seq = lastApplied;
      if (readState == rs && rs.tryRetain()) {
        sequenceOut[0] = seq;
        return rs;
      }
    }
  }

  public long lastApplied() {
    return lastApplied;
  }

  /** Sealed memtables waiting for flush. Precondition: holds the lock (see {@link #locked}). */
  public int immutableCountLocked() {
    return immutables.size();
  }

  /** Bytes held by every memtable, and how many of them are sealed. */
  public record Usage(long bytes, int immutables) {}

  /** The memory the memtables hold, read consistently. */
  public Usage usage() {
    synchronized (lock) {
      long bytes = mutable.approximateBytes();
      for (Memtable m : immutables) {
        bytes += m.approximateBytes();
      }
      return new Usage(bytes, immutables.size());
    }
  }

  /**
   * Native memory of the memtables' chunks, lent and pooled (a gauge; zero after {@link #close}
   * once every reader let go).
   */
  public ChunkPool chunks() {
    return chunks;
  }

  /**
   * Drop the list's references (its memtables and its published read state) and free the pooled
   * chunks; a read state still retained frees its memtables' chunks when released. Precondition:
   * the engine accepts no more writes or reads.
   */
  public void close() {
    synchronized (lock) {
      readState.release();
      mutable.release();
      immutables.forEach(Memtable::release);
      immutables.clear();
      chunks.close();
    }
  }

  /** Bytes of the mutable memtable (a gauge: read without the lock). */
  public long mutableBytes() {
    return mutable.approximateBytes();
  }

  /** Hold flushes (tests of memtable pressure); sealed memtables queue up meanwhile. */
  public void pauseFlushes() {
    flushesPaused = true;
  }

  public void resumeFlushes() {
    flushesPaused = false;
    wakeWaiters();
  }

  private void waitOnLock(long millis) {
    try {
      lock.wait(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a flush", e);
    }
  }
}
