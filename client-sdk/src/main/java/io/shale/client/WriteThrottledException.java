package io.shale.client;

import java.time.Duration;

/**
 * A write refused because a replica's engine is STOPPED by write pressure (or the leader's queue of
 * pending requests is full), after the client's {@link ThrottlePolicy} gave up waiting. Nothing of
 * it was applied. Slow down, or look at the named node's compactions.
 */
public final class WriteThrottledException extends ShaleException {
  private static final long serialVersionUID = 1L;
  private final String node;
  private final String cause;
  private final Duration retryAfter;

  public WriteThrottledException(
      String message, String node, String cause, Duration retryAfter, Throwable t) {
    super(message, t);
    this.node = node;
    this.cause = cause;
    this.retryAfter = retryAfter;
  }

  /** The node whose engine (or request queue) refused the write. */
  public String node() {
    return node;
  }

  /**
   * Why: {@code L0_FILES}, {@code PENDING_COMPACTION_BYTES}, {@code MEMTABLES} or {@code
   * RAFT_PENDING_REQUESTS}.
   */
  public String throttleCause() {
    return cause;
  }

  /** The server's hint for when to try again. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
