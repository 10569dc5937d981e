package io.shale.client;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One call of the client, through as many attempts as its policies allow, all within the call's
 * deadline: transient failures (UNAVAILABLE, an attempt's timeout) move to another endpoint after a
 * backoff ({@link RetryPolicy}); throttling waits the server's hint on the same endpoint ({@link
 * ThrottlePolicy}); anything else fails at once, translated to a typed exception.
 *
 * <p>The request is built once by the caller, so a retried write carries the same request id.
 */
final class RetryingCall<T> {
  /** An attempt of the request on {@code channel}, to finish within {@code timeoutMillis}. */
  @FunctionalInterface
  interface Rpc<T> {
    ListenableFuture<T> send(Channel channel, long timeoutMillis);
  }

  /** The settings a call runs under: one per client. */
  record Settings(
      Endpoints endpoints,
      Duration deadline,
      RetryPolicy retry,
      ThrottlePolicy throttle,
      ScheduledExecutorService timer,
      ClientMetrics metrics,
      Runnable onEndpointFailure,
      boolean spreadReads) {
    /**
     * For requests that must not be repeated blindly (membership changes, or a compaction of "the
     * answering node", which a retry would send to another node): one attempt, which may take the
     * whole deadline.
     */
    Settings singleAttempt() {
      return new Settings(
          endpoints,
          deadline,
          new RetryPolicy(1, Duration.ZERO, Duration.ZERO, deadline),
          ThrottlePolicy.failFast(),
          timer,
          metrics,
          onEndpointFailure,
          spreadReads);
    }
  }

  private final Settings s;
  private final String operation;
  private final Rpc<T> rpc;
  private final CompletableFuture<T> result = new CompletableFuture<>();
  private final long startNanos = System.nanoTime();
  private final long deadlineNanos;

  /** Attempts sent, throttled ones included (for messages). */
  private int attempts;

  /** Attempts that failed for a transient reason: what the RetryPolicy bounds. */
  private int transientFailures;

  /** An earlier attempt may have been applied (it timed out, or a node failed to commit it). */
  private boolean ambiguous;

  private int throttleRetries;
  private long throttleWaitedMillis;
  private Status lastStatus;
  private Throwable lastFailure;

  /** The last failure a node sent (not a transport error): the most telling, usually. */
  private Status lastNodeStatus;

  private Metadata lastNodeTrailers;

  private RetryingCall(Settings s, String operation, Rpc<T> rpc) {
    this.s = s;
    this.operation = operation;
    this.rpc = rpc;
    this.deadlineNanos = startNanos + s.deadline().toNanos();
  }

  /** Whether attempts go to the endpoints in turn (a read that any node answers). */
  private boolean anyEndpoint;

  static <T> CompletableFuture<T> start(Settings s, String operation, Rpc<T> rpc) {
    RetryingCall<T> c = new RetryingCall<>(s, operation, rpc);
    c.watchdog();
    c.attempt();
    return c.result;
  }

  /**
   * A read: with {@code spreadReads}, each attempt goes to the next healthy endpoint in turn (every
   * node answers linearizable reads); else to the preferred one, as writes do.
   */
  static <T> CompletableFuture<T> startRead(Settings s, String operation, Rpc<T> rpc) {
    RetryingCall<T> c = new RetryingCall<>(s, operation, rpc);
    c.anyEndpoint = s.spreadReads();
    c.watchdog();
    c.attempt();
    return c.result;
  }

  /** How long after its deadline a call still unanswered is ended by {@link #watchdog}. */
  static final long WATCHDOG_GRACE_MILLIS = 1000;

  /**
   * Ends the call at its deadline (plus a grace for the last attempt's own timeout to report first)
   * whatever became of its attempts: an answer that never came, a retry lost, an exception thrown
   * on a transport thread: a caller must always get an answer by its deadline, even with every node
   * killed.
   */
  private void watchdog() {
    long delay =
        TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()) + WATCHDOG_GRACE_MILLIS;
    try {
      ScheduledFuture<?> w =
          s.timer()
              .schedule(
                  () -> {
                    if (result.isDone()) {
                      return;
                    }
                    fail(
                        System.nanoTime() >= deadlineNanos
                            ? timeout()
                            : new ShaleException(
                                "the client was closed during " + operation, null));
                  },
                  delay,
                  TimeUnit.MILLISECONDS);
      result.whenComplete((v, e) -> w.cancel(false));
    } catch (RuntimeException closed) {
      // A closed client: attempt() says so.
    }
  }

  private void attempt() {
    try {
      attemptOnce();
    } catch (RuntimeException | Error e) {
      fail(new ShaleException("internal error in the client during " + operation, e));
    }
  }

  private void attemptOnce() {
    long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
    if (remainingMillis <= 0) {
      fail(timeout());
      return;
    }
    attempts++;
    int endpoint = anyEndpoint ? s.endpoints().nextHealthy() : s.endpoints().preferred();
    long timeout = Math.min(remainingMillis, s.retry().attemptTimeout().toMillis());
    ListenableFuture<T> f;
    try {
      f = rpc.send(s.endpoints().channel(endpoint), timeout);
    } catch (RuntimeException e) { // a closed channel refuses new calls
      fail(new ShaleException("the client is closed", e));
      return;
    }
    Futures.addCallback(
        f,
        new FutureCallback<T>() {
          @Override
          public void onSuccess(T value) {
            s.metrics().completed(operation, "ok", System.nanoTime() - startNanos);
            result.complete(value);
          }

          @Override
          public void onFailure(Throwable t) {
            try {
              failed(endpoint, t);
            } catch (RuntimeException | Error e) {
              fail(
                  new ShaleException(
                      "internal error in the client after a failed " + operation + ": " + t, e));
            }
          }
        },
        MoreExecutors.directExecutor());
  }

  private void failed(int endpoint, Throwable t) {
    lastFailure = t;
    lastStatus = Status.fromThrowable(t);
    Metadata trailers = Status.trailersFromThrowable(t);
    if (lastStatus.getCause() == null) { // transport failures carry their cause; answers do not
      lastNodeStatus = lastStatus;
      lastNodeTrailers = trailers;
    }
    boolean throttled =
        lastStatus.getCode() == Status.Code.RESOURCE_EXHAUSTED
            && trailers != null
            && ErrorTrailers.WRITE_THROTTLED.equals(trailers.get(ErrorTrailers.ERROR));
    switch (throttled ? Status.Code.RESOURCE_EXHAUSTED : lastStatus.getCode()) {
      case RESOURCE_EXHAUSTED -> {
        if (!throttled) { // gRPC's own (a message too large): not the cluster's write pressure
          fail(refused(trailers));
          return;
        }
        long wait = retryAfterMillis(lastStatus, trailers);
        if (throttleRetries < s.throttle().maxRetries()
            && throttleWaitedMillis + wait <= s.throttle().maxWait().toMillis()
            && System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait) < deadlineNanos) {
          throttleRetries++;
          throttleWaitedMillis += wait;
          retryAfter(wait, "WRITE_THROTTLED");
        } else if (ambiguous) {
          // This attempt was refused, but an earlier one may have reached the log and commit.
          fail(
              new ShaleUnavailableException(
                  "write throttled"
                      + where()
                      + " after an earlier "
                      + "attempt's outcome was unknown, so it may or may not have been applied; "
                      + last(),
                  lastFailure));
        } else {
          fail(throttled(trailers, wait));
        }
      }
      case UNAVAILABLE, DEADLINE_EXCEEDED -> {
        transientFailures++;
        if (!(lastStatus.getCause() instanceof ConnectException)) {
          // Not a refused connection: the request may have reached a node before the failure.
          ambiguous = true;
        }
        s.endpoints().failed(endpoint);
        s.onEndpointFailure().run();
        if (transientFailures < s.retry().maxAttempts()) {
          retryAfter(
              s.retry()
                  .backoffMillis(transientFailures + 1, ThreadLocalRandom.current().nextLong()),
              lastStatus.getCode().name());
        } else {
          fail(exhausted());
        }
      }
      default -> fail(refused(trailers));
    }
  }

  private void retryAfter(long millis, String reason) {
    s.metrics().retried(operation, reason);
    try {
      s.timer().schedule(this::attempt, millis, TimeUnit.MILLISECONDS);
    } catch (RuntimeException closed) {
      fail(new ShaleException("the client was closed during " + operation, closed));
    }
  }

  private void fail(ShaleException e) {
    String outcome = lastStatus == null ? "CLIENT" : lastStatus.getCode().name();
    s.metrics().completed(operation, outcome, System.nanoTime() - startNanos);
    result.completeExceptionally(e);
  }

  // ------------------------------------------------------------------------------------------
  // Translating the last failure into what the caller gets

  private String where() {
    return " ("
        + operation
        + ", "
        + attempts
        + " attempt"
        + (attempts == 1 ? "" : "s")
        + " in "
        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)
        + " ms on "
        + s.endpoints().addresses()
        + ")";
  }

  private String last() {
    if (lastStatus == null) {
      return "no attempt was made";
    }
    String last = "last failure " + lastStatus.getCode() + ": " + lastStatus.getDescription();
    if (lastStatus.getCause() != null) { // a transport failure: say what the socket said
      last += " (" + lastStatus.getCause().getMessage() + ")";
    }
    if (lastNodeStatus != null && lastNodeStatus != lastStatus) {
      last +=
          "; last answer from a node "
              + lastNodeStatus.getCode()
              + ": "
              + lastNodeStatus.getDescription();
    }
    return last;
  }

  private ShaleTimeoutException timeout() {
    return new ShaleTimeoutException(
        "no answer within the deadline of "
            + s.deadline().toMillis()
            + " ms"
            + where()
            + "; "
            + last()
            + ". A write may or may not have been applied.",
        lastFailure);
  }

  /** Attempts spent: a timeout if the call's deadline passed too, else unavailability. */
  private ShaleException exhausted() {
    if (System.nanoTime() >= deadlineNanos) {
      return timeout();
    }
    if (lastNodeTrailers != null
        && ErrorTrailers.NO_LEADER.equals(lastNodeTrailers.get(ErrorTrailers.ERROR))) {
      return new NotLeaderException(
          "the cluster has no leader reachable"
              + where()
              + "; "
              + last()
              + ". Check that a majority of nodes run (shalectl status).",
          lastFailure);
    }
    return new ShaleUnavailableException(
        "no node could serve the request" + where() + "; " + last(), lastFailure);
  }

  private ShaleException refused(Metadata trailers) {
    String error = trailers == null ? null : trailers.get(ErrorTrailers.ERROR);
    String d = lastStatus.getDescription();
    if (lastStatus.getCode() == Status.Code.INVALID_ARGUMENT) {
      if (ErrorTrailers.KEY_TOO_LARGE.equals(error)) {
        return new KeyTooLargeException(d, lastFailure);
      }
      if (ErrorTrailers.VALUE_TOO_LARGE.equals(error)) {
        return new ValueTooLargeException(d, lastFailure);
      }
      return new InvalidRequestException(d, lastFailure);
    }
    if (lastStatus.getCode() == Status.Code.NOT_FOUND
        && ErrorTrailers.LEASE_NOT_FOUND.equals(error)) {
      return new LeaseNotFoundException(d, lastFailure);
    }
    return new ShaleException(lastStatus.getCode() + ": " + d + where(), lastFailure);
  }

  private WriteThrottledException throttled(Metadata trailers, long retryAfterMillis) {
    String node = trailers == null ? null : trailers.get(ErrorTrailers.THROTTLED_NODE);
    String cause = trailers == null ? null : trailers.get(ErrorTrailers.THROTTLE_CAUSE);
    return new WriteThrottledException(
        lastStatus.getDescription()
            + where()
            + " after "
            + throttleRetries
            + " throttled retr"
            + (throttleRetries == 1 ? "y" : "ies")
            + " ("
            + throttleWaitedMillis
            + " ms waited)",
        node,
        cause,
        Duration.ofMillis(retryAfterMillis),
        lastFailure);
  }

  /** The server's hint from its trailer, else 100 ms. Descriptions are for people: never parsed. */
  private static long retryAfterMillis(Status status, Metadata trailers) {
    String hint = trailers == null ? null : trailers.get(ErrorTrailers.RETRY_AFTER_MS);
    if (hint != null) {
      try {
        return Long.parseLong(hint);
      } catch (NumberFormatException ignored) {
        // a malformed hint: the default
      }
    }
    return 100;
  }
}
