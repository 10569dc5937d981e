package io.shale.client;

import java.time.Duration;

/**
 * What the client does when the cluster throttles a write (a replica's engine is STOPPED by write
 * pressure): wait the server's retry-after hint and try again, up to {@code maxRetries} times and
 * {@code maxWait} of waiting in all (and within the call's deadline), then throw {@link
 * WriteThrottledException}. Throttling is not a failure of a node, so these retries do not count
 * against the {@link RetryPolicy}.
 */
public record ThrottlePolicy(int maxRetries, Duration maxWait) {
  /** Up to 10 retries and 5 s of waiting: rides out a compaction burst, not an outage. */
  public static ThrottlePolicy defaults() {
    return new ThrottlePolicy(10, Duration.ofSeconds(5));
  }

  /** Throw {@link WriteThrottledException} at once: for callers that shed load themselves. */
  public static ThrottlePolicy failFast() {
    return new ThrottlePolicy(0, Duration.ZERO);
  }

  public ThrottlePolicy {
    if (maxRetries < 0 || maxWait.isNegative()) {
      throw new IllegalArgumentException(
          "maxRetries and maxWait must not be negative, got " + maxRetries + " and " + maxWait);
    }
  }
}
