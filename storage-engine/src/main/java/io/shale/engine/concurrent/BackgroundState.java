package io.shale.engine.concurrent;

import java.io.IOException;

/**
 * Whether an engine's background work (flushes, compactions, blob GC) may go on: it stops for good
 * when the engine starts closing or when a job fails. The first failure is kept; after it the
 * engine accepts no writes (its memtables could never be flushed), while reads go on.
 *
 * <p>Thread-safe. {@code onChange} runs after every change, so that writers waiting for a flush
 * wake up and see the failure.
 */
public final class BackgroundState {
  private final Runnable onChange;
  private volatile Throwable error;
  private volatile boolean closing;

  public BackgroundState(Runnable onChange) {
    this.onChange = onChange;
  }

  /** Record that {@code what} failed; ignored once closing (jobs stopped by close fail too). */
  public void fail(String what, Throwable e) {
    if (error == null && !closing) {
      error = new IOException(what + " failed: " + e.getMessage(), e);
    }
    onChange.run();
  }

  public Throwable error() {
    return error;
  }

  public boolean failed() {
    return error != null;
  }

  public boolean closing() {
    return closing;
  }

  public void startClosing() {
    closing = true;
    onChange.run();
  }

  /** Whether background jobs may start: not closing and nothing failed. */
  public boolean healthy() {
    return !closing && error == null;
  }
}
