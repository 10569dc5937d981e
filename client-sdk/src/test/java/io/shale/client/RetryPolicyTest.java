package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Backoff bounds, policy validation and prefix ranges: the client's arithmetic. */
class RetryPolicyTest {
  @Test
  void backoffDoublesUpToTheCapWithFullJitter() {
    RetryPolicy p =
        new RetryPolicy(10, Duration.ofMillis(50), Duration.ofMillis(400), Duration.ofSeconds(1));
    SplittableRandom random = new SplittableRandom(42);
    long[] caps = {50, 100, 200, 400, 400, 400};
    for (int attempt = 2; attempt < 2 + caps.length; attempt++) {
      long max = 0;
      long min = Long.MAX_VALUE;
      for (int i = 0; i < 2000; i++) {
        long b = p.backoffMillis(attempt, random.nextLong());
        max = Math.max(max, b);
        min = Math.min(min, b);
      }
      long cap = caps[attempt - 2];
      assertThat(max)
          .as("attempt %d", attempt)
          .isLessThanOrEqualTo(cap)
          .isGreaterThan(cap * 9 / 10);
      assertThat(min).as("attempt %d", attempt).isLessThan(cap / 10 + 1);
    }
    assertThat(RetryPolicy.none().backoffMillis(2, 12345)).isZero();
  }

  @Test
  void policiesRefuseNonsenseNamingIt() {
    assertThatThrownBy(
            () -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1)))
        .hasMessageContaining("maxAttempts must be at least 1, got 0");
    assertThatThrownBy(
            () ->
                new RetryPolicy(
                    3, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .hasMessageContaining("0 <= initial <= max");
    assertThatThrownBy(() -> new ThrottlePolicy(-1, Duration.ZERO))
        .hasMessageContaining("must not be negative");
    assertThatThrownBy(() -> ShaleClient.builder().deadline(Duration.ZERO))
        .hasMessageContaining("deadline must be positive");
  }

  @Test
  void prefixEndIsTheFirstKeyAfterThePrefix() {
    assertThat(ShaleClient.prefixEnd(new byte[] {'a', 'b'})).containsExactly('a', 'c');
    assertThat(ShaleClient.prefixEnd(new byte[] {'a', (byte) 0xFF})).containsExactly('b');
    assertThat(ShaleClient.prefixEnd(new byte[] {(byte) 0xFF, (byte) 0xFF})).isNull();
  }
}
