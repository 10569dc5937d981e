package io.shale.node.metrics;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Latency of every gRPC call this node serves, as {@code shale.grpc.server.requests} with tags
 * {@code method} (e.g. shale.v1.KV/Put) and {@code status} (OK, RESOURCE_EXHAUSTED, ...), with a
 * percentile histogram so Prometheus can compute P50/P99 across nodes.
 */
public final class GrpcMeters implements ServerInterceptor {
  private final MeterRegistry registry;

  /** Timers by method and status code, so a call does not build and look up a meter id. */
  private final Map<String, Map<Status.Code, Timer>> timers = new ConcurrentHashMap<>();

  public GrpcMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    long start = System.nanoTime();
    String method = call.getMethodDescriptor().getFullMethodName();
    ServerCall<Q, R> timed =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            timer(method, status.getCode()).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            super.close(status, trailers);
          }
        };
    return next.startCall(timed, headers);
  }

  private Timer timer(String method, Status.Code code) {
    return timers
        .computeIfAbsent(method, m -> new ConcurrentHashMap<>())
        .computeIfAbsent(
            code,
            c ->
                Timer.builder("shale.grpc.server.requests")
                    .tag("method", method)
                    .tag("status", c.name())
                    .publishPercentileHistogram()
                    .register(registry));
  }
}
