package io.shale.engine.concurrent;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets reads run until a close, then lets the close wait for the reads still in flight, so that a
 * read never touches a file the close has released. A read {@link #enter}s (false once closing: the
 * caller fails it with a clear error) and {@link #exit}s exactly once after a successful enter.
 *
 * <p>Invariant: once {@link #closeAndAwait} returns true, no read is inside and none can enter.
 * Both sides use sequentially consistent operations (increment then check closing; set closing then
 * check the count), so either the reader sees the close or the close sees the reader.
 */
public final class ReadGate {
  private final AtomicLong inFlight = new AtomicLong();
  private volatile boolean closing;

  /** Whether the read may go on; if true, call {@link #exit} when it is done. */
  public boolean enter() {
    inFlight.incrementAndGet();
    if (closing) {
      exit();
      return false;
    }
    return true;
  }

  public void exit() {
    if (inFlight.decrementAndGet() == 0 && closing) {
      synchronized (this) {
        notifyAll();
      }
    }
  }

  /** Reads in flight now. */
  public long inFlight() {
    return inFlight.get();
  }

  /**
   * Refuses new reads and waits up to {@code max} for those in flight; true when none is left
   * (false: a reader, e.g. an iterator never closed, is still inside).
   */
  public boolean closeAndAwait(Duration max) throws InterruptedException {
    closing = true;
    long deadline = System.nanoTime() + max.toNanos();
    synchronized (this) {
      while (inFlight.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }
    return true;
  }
}
