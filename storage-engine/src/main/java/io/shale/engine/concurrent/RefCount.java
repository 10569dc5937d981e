package io.shale.engine.concurrent;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A lock-free reference count that starts at one (the creator's reference). Once it reaches zero
 * the object is dead: {@link #tryRetain} fails from then on, so a reader racing the last release
 * never resurrects it.
 */
public final class RefCount {
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Take a reference unless the count already reached zero. */
  public boolean tryRetain() {
    while (true) {
      int r = refs.get();
      if (r <= 0) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  /**
   * Drop a reference; true if it was the last one (the caller frees the object).
   *
   * @throws IllegalStateException if released more often than retained ({@code what} names it)
   */
  public boolean release(String what) {
    int r = refs.decrementAndGet();
    if (r < 0) {
      throw new IllegalStateException(what + " released more often than retained");
    }
    return r == 0;
  }
}
