package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.util.concurrent.SettableFuture;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A call always ends by its deadline. The nemesis suite saw SDK calls wait for minutes past a 5 s
 * deadline while nodes were killed; whatever the transport does (here: an answer that never comes,
 * and an attempt that throws), the caller gets an answer.
 */
class RetryingCallTest {
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final Endpoints endpoints =
      new Endpoints(
          List.of("nowhere:1"),
          a -> NettyChannelBuilder.forTarget("localhost:1").usePlaintext().build());

  @AfterEach
  void close() {
    endpoints.close();
    timer.shutdownNow();
  }

  private RetryingCall.Settings settings(Duration deadline) {
    return new RetryingCall.Settings(
        endpoints,
        deadline,
        RetryPolicy.defaults(),
        ThrottlePolicy.failFast(),
        timer,
        new ClientMetrics(new SimpleMeterRegistry()),
        () -> {},
        true);
  }

  @Test
  void anAnswerThatNeverComesEndsAtTheDeadline() {
    long start = System.nanoTime();
    CompletableFuture<String> f =
        RetryingCall.start(
            settings(Duration.ofMillis(300)),
            "get",
            (channel, timeout) -> SettableFuture.create()); // never set
    assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ShaleTimeoutException.class)
        .hasMessageContaining("deadline of 300 ms");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
        .isLessThan(300 + RetryingCall.WATCHDOG_GRACE_MILLIS + 2000);
  }

  @Test
  void anAttemptThatThrowsEndsTheCallWithTheReason() {
    CompletableFuture<String> f =
        RetryingCall.start(
            settings(Duration.ofSeconds(5)),
            "put",
            (channel, timeout) -> {
              throw new AssertionError("broken transport");
            });
    assertThatThrownBy(() -> f.get(2, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ShaleException.class)
        .hasMessageContaining("internal error in the client during put");
  }
}
