package io.shale.client;

import java.time.Duration;

/**
 * How a call that failed for a transient reason (a node down or unreachable, no leader yet, an
 * attempt timing out) is tried again: on the next endpoint, after a backoff that doubles from
 * {@code initialBackoff} up to {@code maxBackoff} with full jitter, up to {@code maxAttempts}
 * attempts in all and always within the call's deadline. Each attempt may take at most {@code
 * attemptTimeout}, so that one unresponsive node does not use the whole deadline.
 *
 * <p>Writes are retried too: each carries a request id the server deduplicates, so a retried write
 * is applied once.
 */
public record RetryPolicy(
    int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration attemptTimeout) {
  /** 6 attempts, backoff 50 ms doubling to 2 s, 5 s per attempt. */
  public static RetryPolicy defaults() {
    return new RetryPolicy(6, Duration.ofMillis(50), Duration.ofSeconds(2), Duration.ofSeconds(5));
  }

  /** One attempt, no retry. */
  public static RetryPolicy none() {
    return new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5));
  }

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
    }
    if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException(
          "backoff must satisfy 0 <= initial <= max, got " + initialBackoff + " and " + maxBackoff);
    }
    if (attemptTimeout.isNegative() || attemptTimeout.isZero()) {
      throw new IllegalArgumentException("attemptTimeout must be positive, got " + attemptTimeout);
    }
  }

  /** The pause before attempt {@code next} (2 for the first retry), jittered. */
  long backoffMillis(int next, long random) {
    long cap =
        Math.min(
            maxBackoff.toMillis(),
            initialBackoff.toMillis() << Math.min(20, Math.max(0, next - 2)));
    return cap <= 0 ? 0 : Math.floorMod(random, cap + 1);
  }
}
