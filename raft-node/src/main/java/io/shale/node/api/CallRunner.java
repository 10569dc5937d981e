package io.shale.node.api;

import com.google.protobuf.MessageLite;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the node's KV calls: admits each one against {@link InflightLimit} (refusing it at once,
 * with a retry-after, when the node holds too much already), runs it on one of a bounded set of
 * handler threads unless its deadline passed while it queued, and maps its failure to a gRPC
 * status: a limit is INVALID_ARGUMENT naming it, an I/O failure UNAVAILABLE, anything unforeseen
 * INTERNAL with an incident id ({@link StatusMapper}).
 */
public final class CallRunner implements AutoCloseable {
  /** How long a client refused for overload should wait before it retries. */
  private static final long OVERLOAD_RETRY_AFTER_MS = 50;

  private final String node;
  private final InflightLimit inflight;
  private final StatusMapper statuses;
  private final ExecutorService handlers;
  private final MeterRegistry registry;

  /**
   * How much a node takes on at once ({@code limits.max_inflight_requests}, {@code
   * limits.max_inflight_write_bytes}, {@code limits.handler_threads}): requests beyond are
   * RESOURCE_EXHAUSTED with a retry-after, and at most {@code handlerThreads} wait on Raft at once.
   * With {@code virtualHandlers} ({@code limits.virtual_handlers}) each admitted call runs on a
   * virtual thread of its own instead: a call waiting on Raft then holds no platform thread, and
   * the requests in flight are bounded by {@code maxRequests} alone.
   */
  public record Admission(
      int maxRequests, long maxWriteBytes, int handlerThreads, boolean virtualHandlers) {
    public static Admission defaults() {
      return new Admission(1024, 64L << 20, 128, false);
    }
  }

  CallRunner(String node, Admission admission, StatusMapper statuses, MeterRegistry registry) {
    this.node = node;
    this.statuses = statuses;
    this.registry = registry;
    this.inflight =
        new InflightLimit(admission.maxRequests(), admission.maxWriteBytes(), registry, node);
    if (admission.virtualHandlers()) {
      this.handlers =
          Executors.newThreadPerTaskExecutor(
              Thread.ofVirtual().name(node + "-kv-handler-", 0).factory());
    } else {
      ThreadPoolExecutor pool =
          new ThreadPoolExecutor(
              admission.handlerThreads(),
              admission.handlerThreads(),
              60,
              TimeUnit.SECONDS,
              new LinkedBlockingQueue<>(admission.maxRequests()),
              DaemonThreads.numbered(node + "-kv-handler-"));
      pool.allowCoreThreadTimeOut(true);
      this.handlers = pool;
    }
  }

  /** A call's work, run on a handler thread. */
  @FunctionalInterface
  interface Call<T> {
    T run() throws IOException, StatusException;
  }

  /** Nanoseconds left before the call's deadline (a day when it has none). */
  static long remainingNanos() {
    Deadline d = Context.current().getDeadline();
    return d == null
        ? TimeUnit.DAYS.toNanos(1)
        : Math.max(0, d.timeRemaining(TimeUnit.NANOSECONDS));
  }

  /**
   * Waits for {@code reply} until the call's deadline. After it: DEADLINE_EXCEEDED, saying that a
   * write ({@code isWrite}) may still apply, which its request id makes safe to retry.
   */
  static <T> T awaitWithinDeadline(CompletableFuture<T> reply, String what, boolean isWrite)
      throws ExecutionException, StatusException {
    try {
      return reply.get(remainingNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").asException();
    } catch (TimeoutException e) {
      throw deadlineExceeded(what, isWrite);
    }
  }

  /**
   * Admits the request (refusing it when the node holds too much already), then runs {@code call}
   * on a handler thread, within the call's deadline, mapping its failures to gRPC statuses.
   */
  <T> void serve(StreamObserver<T> out, MessageLite req, Call<T> call) {
    InflightLimit.Permit permit = inflight.tryAcquire(req.getSerializedSize());
    if (permit == null) {
      out.onError(overloaded());
      return;
    }
    Context ctx = Context.current();
    try {
      handlers.execute(
          ctx.wrap(
              () -> {
                try (permit) {
                  Deadline d = ctx.getDeadline();
                  if (d != null && d.isExpired()) {
                    out.onError(
                        Status.DEADLINE_EXCEEDED
                            .withDescription("the deadline passed before a handler was free")
                            .asException());
                    return;
                  }
                  respond(out, call);
                }
              }));
    } catch (RejectedExecutionException full) {
      permit.close();
      out.onError(overloaded());
    }
  }

  /** A call's work that answers later: it starts on the gRPC thread and must not block. */
  @FunctionalInterface
  interface AsyncCall<T> {
    CompletableFuture<T> start() throws IOException, StatusException;
  }

  /**
   * As {@link #serve}, for work that does not block: started on the calling gRPC thread, answered
   * from whichever thread completes it (a group of writes is answered together, so their replies
   * leave in few socket writes). Past the call's deadline it is DEADLINE_EXCEEDED ({@code isWrite}:
   * saying the write may still apply).
   */
  <T> void serveAsync(
      StreamObserver<T> out, MessageLite req, String what, boolean isWrite, AsyncCall<T> call) {
    InflightLimit.Permit permit = inflight.tryAcquire(req.getSerializedSize());
    if (permit == null) {
      out.onError(overloaded());
      return;
    }
    CompletableFuture<T> reply;
    try {
      reply = call.start();
    } catch (IOException | StatusException | RuntimeException e) {
      permit.close();
      out.onError(failure(e));
      return;
    }
    // The permit is held until the work itself ends, not the caller's wait: a write past its
    // deadline still sits in a group, or is still resent to the leader, and its bytes with it.
    // (orTimeout on a copy: on the reply itself it would end the wait and the permit together.)
    reply.whenComplete((response, e) -> permit.close());
    long timeout = remainingNanos();
    reply
        .copy()
        .orTimeout(timeout, TimeUnit.NANOSECONDS)
        .whenComplete(
            (response, e) -> {
              if (e == null) {
                out.onNext(response);
                out.onCompleted();
                return;
              }
              Throwable cause = RaftSubmitter.unwrap(e);
              out.onError(
                  cause instanceof TimeoutException
                      ? deadlineExceeded(what, isWrite)
                      : failure(cause));
            });
  }

  private static StatusException deadlineExceeded(String what, boolean isWrite) {
    return Status.DEADLINE_EXCEEDED
        .withDescription(
            "no reply to the "
                + what
                + " within the call's deadline"
                + (isWrite ? "; the write may still apply (retry with the same request id)" : ""))
        .asException();
  }

  /** The status a call's failure is answered with. */
  StatusException failure(Throwable e) {
    e = RaftSubmitter.unwrap(e);
    if (e instanceof RequestLimits.LimitExceeded bad) {
      return StatusMapper.limitExceeded(bad.error, bad.getMessage());
    }
    if (e instanceof IllegalArgumentException bad) {
      return Status.INVALID_ARGUMENT.withDescription(bad.getMessage()).asException();
    }
    if (e instanceof StatusException s) {
      return s;
    }
    if (e instanceof IOException) {
      return StatusMapper.unavailable(String.valueOf(e), e);
    }
    if (e instanceof RuntimeException r) {
      return statuses.internal(r);
    }
    return statuses.internal(new IllegalStateException(e));
  }

  /**
   * The gate that counts each request from its arrival, before it is parsed.
   *
   * @param largestMessage what a message of unknown size counts as: the largest the port accepts
   */
  ArrivalGate arrivals(long largestMessage) {
    return new ArrivalGate(
        inflight,
        this::overloaded,
        largestMessage,
        registry.counter("shale.inflight.refused_on_arrival", "node", node));
  }

  private StatusException overloaded() {
    return StatusMapper.throttled(
        node,
        "NODE_INFLIGHT_LIMIT",
        OVERLOAD_RETRY_AFTER_MS,
        "node "
            + node
            + " holds its limit of requests in flight ("
            + inflight.maxRequests()
            + " requests, limits.max_inflight_requests, or "
            + inflight.maxBytes()
            + " bytes of writes, limits.max_inflight_write_bytes); retry after "
            + OVERLOAD_RETRY_AFTER_MS
            + " ms");
  }

  private <T> void respond(StreamObserver<T> out, Call<T> call) {
    T response;
    try {
      response = call.run();
    } catch (IOException | StatusException | RuntimeException e) {
      out.onError(failure(e));
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  @Override
  public void close() {
    handlers.shutdownNow();
  }
}
