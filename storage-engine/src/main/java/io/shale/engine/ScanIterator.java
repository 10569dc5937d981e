package io.shale.engine;

import io.shale.engine.iterator.VisibleEntryIterator;

/**
 * The result of a scan: call {@link #next()} until it returns false, reading {@link #key()} and
 * {@link #value()} in between. Sees a consistent state (the one at its creation) while writes
 * and compactions go on, and pins the files of that state until {@link #close()}. Not
 * thread-safe; use one per thread.
 */
public final class ScanIterator implements AutoCloseable {
  private final VisibleEntryIterator entries;
  private final Runnable onClose;
  private boolean closed;

  ScanIterator(VisibleEntryIterator entries, Runnable onClose) {
    this.entries = entries;
    this.onClose = onClose;
  }

  /** Advance; false when the range or the limit is exhausted. */
  public boolean next() {
    if (closed) {
      throw new IllegalStateException("scan iterator is closed");
    }
    return entries.next();
  }

  public byte[] key() {
    return entries.key();
  }

  /** The current value; throws IllegalStateException for a keys-only scan. */
  public byte[] value() {
    return entries.value();
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        entries.close();
      } finally {
        onClose.run();
      }
    }
  }
}
