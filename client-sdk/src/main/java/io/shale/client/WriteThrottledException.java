package io.shale.client;

import java.time.Duration;

/**
 * A write refused because a replica's engine is STOPPED by write pressure (or the leader's
 * pending requests are full), after the client's retries. Nothing of it was applied.
 */
public final class WriteThrottledException extends ShaleException {
  private static final long serialVersionUID = 1L;
  private final Duration retryAfter;

  public WriteThrottledException(String message, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.retryAfter = retryAfter;
  }

  /** The server's hint for when to try again. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
