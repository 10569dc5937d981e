package io.shale.engine;

import io.shale.engine.memtable.ReadState;

/**
 * A consistent read view of the engine at the moment {@link Engine#snapshot()} returned. Writes,
 * flushes and compactions that happen afterwards are invisible to it. It pins the memtables and
 * table files of that moment until {@link #close()}: close snapshots promptly, or old file
 * generations accumulate on disk ({@link EngineStats#pinnedObsoleteBytes()}).
 *
 * <p>Thread-safe: any number of threads may read through one snapshot.
 */
public final class Snapshot implements ReadView, AutoCloseable {
  private final Engine engine;
  private final ReadState state;
  private final long sequence;
  private volatile boolean closed;

  Snapshot(Engine engine, ReadState state, long sequence) {
    this.engine = engine;
    this.state = state;
    this.sequence = sequence;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("snapshot at index " + sequence + " is closed");
    }
  }

  /** Take a reference for one read, so that a concurrent close() cannot free the state under it. */
  private void retain() {
    checkOpen();
    if (!state.tryRetain()) {
      throw new IllegalStateException("snapshot at index " + sequence + " is closed");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    retain();
    try {
      return engine.getFrom(state, sequence, key);
    } finally {
      state.release();
    }
  }

  @Override
  public ScanIterator scan(ScanOptions options) {
    retain();
    return engine.scanFrom(state, sequence, options);
  }

  @Override
  public long appliedIndex() {
    return sequence;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    engine.snapshotClosed();
    state.release();
  }
}
