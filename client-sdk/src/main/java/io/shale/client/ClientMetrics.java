package io.shale.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client's meters, when the user gave a registry: {@code shale.client.requests} (a timer by
 * operation and outcome: {@code ok} or the failure's gRPC code, from the call to its answer,
 * retries included, with percentile histograms) and {@code shale.client.retries} (a counter by
 * operation and reason). Meters are cached by name, so a call does not build a meter id.
 */
final class ClientMetrics {
  private final MeterRegistry registry;
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  ClientMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void completed(String operation, String outcome, long nanos) {
    if (registry == null) {
      return;
    }
    timers
        .computeIfAbsent(
            operation + '/' + outcome,
            k ->
                Timer.builder("shale.client.requests")
                    .description("Shale client calls, retries included")
                    .tag("operation", operation)
                    .tag("outcome", outcome)
                    .publishPercentileHistogram()
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  void retried(String operation, String reason) {
    if (registry == null) {
      return;
    }
    counters
        .computeIfAbsent(
            operation + '/' + reason,
            k ->
                Counter.builder("shale.client.retries")
                    .description("Shale client attempts retried, by reason")
                    .tag("operation", operation)
                    .tag("reason", reason)
                    .register(registry))
        .increment();
  }
}
