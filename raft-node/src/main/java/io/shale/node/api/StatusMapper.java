package io.shale.node.api;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.client.ErrorTrailers;
import io.shale.engine.pressure.WritePressure;
import io.shale.node.pressure.WriteThrottledByReplica;
import java.time.Duration;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where Ratis's and the engine's failures become gRPC statuses and the trailers of
 * {@link ErrorTrailers}, the contract with the SDK (which reads reasons from trailers, never from
 * description text). Ratis's client raises most failures rather than returning them, and wraps the
 * cause when it tried more than once, so every mapping searches the whole cause chain.
 */
public final class StatusMapper {
  private static final Logger LOG = LoggerFactory.getLogger(StatusMapper.class);

  /** The throttling cause when Ratis's own pending-request limits refuse a write. */
  static final String RAFT_PENDING_REQUESTS = "RAFT_PENDING_REQUESTS";

  private final String self;
  private final MeterRegistry registry;

  /**
   * @param self this node's id, named when its own Raft server is the one throttling
   */
  public StatusMapper(String self, MeterRegistry registry) {
    this.self = self;
    this.registry = registry;
    // At 0 from the start, for every cause this node can report about itself, so that the
    // dashboard and the ShaleWriteThrottlingSustained alert have a series before any refusal.
    for (WritePressure.Cause cause : WritePressure.Cause.values()) {
      if (cause != WritePressure.Cause.NONE) {
        registry.counter("shale.writes.throttled", "node", self, "cause", cause.name());
      }
    }
    registry.counter("shale.writes.throttled", "node", self, "cause", RAFT_PENDING_REQUESTS);
  }

  /** Whether {@code e} or one of its causes is a {@code type}. */
  static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    return find(e, type) != null;
  }

  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  /**
   * A refused write: RESOURCE_EXHAUSTED with the throttling trailers when a replica's engine is
   * STOPPED (naming the node, the cause, the measured value, the threshold and the retry-after
   * hint) or when Ratis's pending-request limits are full; otherwise UNAVAILABLE. Throttled writes
   * are counted in {@code shale.writes.throttled{node,cause}}.
   */
  public StatusException writeFailure(Throwable e) {
    WriteThrottledByReplica.Details d =
        WriteThrottledByReplica.parse(String.valueOf(e == null ? null : e.getMessage()));
    if (d != null) {
      registry.counter("shale.writes.throttled", "node", d.node(), "cause", d.cause()).increment();
      return throttled(
          d.node(),
          d.cause(),
          d.retryAfterMillis(),
          "WriteThrottled: node "
              + d.node()
              + " is STOPPED by "
              + d.cause()
              + " (measured "
              + d.measured()
              + ", threshold "
              + d.threshold()
              + "); retry after "
              + d.retryAfterMillis()
              + " ms");
    }
    if (causedBy(e, ResourceUnavailableException.class)) {
      registry
          .counter("shale.writes.throttled", "node", self, "cause", RAFT_PENDING_REQUESTS)
          .increment();
      return throttled(
          self,
          RAFT_PENDING_REQUESTS,
          100,
          "WriteThrottled: the leader's "
              + "pending requests are full ("
              + e.getMessage()
              + "); retry after 100 ms");
    }
    return unavailable("the write was not committed: " + e, e);
  }

  /** RESOURCE_EXHAUSTED with the trailers the SDK retries by. */
  static StatusException throttled(
      String node, String cause, long retryAfterMillis, String description) {
    Metadata trailers = new Metadata();
    trailers.put(ErrorTrailers.ERROR, ErrorTrailers.WRITE_THROTTLED);
    trailers.put(ErrorTrailers.THROTTLED_NODE, node);
    trailers.put(ErrorTrailers.THROTTLE_CAUSE, cause);
    trailers.put(ErrorTrailers.RETRY_AFTER_MS, Long.toString(retryAfterMillis));
    return Status.RESOURCE_EXHAUSTED.withDescription(description).asException(trailers);
  }

  /** UNAVAILABLE, with the NO_LEADER trailer when {@code e} says no leader could be reached. */
  public static StatusException unavailable(String description, Throwable e) {
    Metadata trailers = new Metadata();
    if (causedBy(e, NotLeaderException.class)
        || causedBy(e, LeaderNotReadyException.class)
        || causedBy(e, RaftRetryFailureException.class)) {
      trailers.put(ErrorTrailers.ERROR, ErrorTrailers.NO_LEADER);
    }
    return Status.UNAVAILABLE.withDescription(description).asException(trailers);
  }

  /**
   * INTERNAL for a failure nothing anticipated (a bug): the client gets an incident id and no
   * internals (messages may hold file paths); the node logs the id with the whole exception.
   */
  public StatusException internal(Throwable e) {
    String incident = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
    LOG.error("incident {}: unexpected failure serving a request", incident, e);
    registry.counter("shale.requests.internal_errors", "node", self).increment();
    Metadata trailers = new Metadata();
    trailers.put(ErrorTrailers.ERROR, ErrorTrailers.INTERNAL);
    return Status.INTERNAL
        .withDescription(
            "internal error on node " + self + "; incident " + incident + " in its log")
        .asException(trailers);
  }

  /** NOT_FOUND for lease {@code id}, which does not live, with its trailer. */
  public static StatusException leaseNotFound(long id) {
    Metadata trailers = new Metadata();
    trailers.put(ErrorTrailers.ERROR, ErrorTrailers.LEASE_NOT_FOUND);
    return Status.NOT_FOUND
        .withDescription("lease " + id + " does not live (never granted, revoked or expired)")
        .asException(trailers);
  }

  /** INVALID_ARGUMENT naming the limit, with the trailer saying which one. */
  public static StatusException limitExceeded(String error, String description) {
    Metadata trailers = new Metadata();
    trailers.put(ErrorTrailers.ERROR, error);
    return Status.INVALID_ARGUMENT.withDescription(description).asException(trailers);
  }

  /**
   * The status for a membership change ({@code what}, e.g. "adding n4") that Ratis did not make.
   * One change at a time, as in etcd: a change in progress is refused at once rather than retried
   * here, so the caller's deadline holds and it decides when to ask again. A member that made no
   * progress is FAILED_PRECONDITION, not UNAVAILABLE: nothing is wrong with the node that answered,
   * and a client would take UNAVAILABLE for its transient failure.
   */
  public static Status membershipRefusal(String what, Throwable failure, Duration adminTimeout) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ReconfigurationInProgressException) {
        return Status.FAILED_PRECONDITION.withDescription(
            what
                + " refused: another membership "
                + "change is in progress (a new member may still be catching up); ask again once it "
                + "has committed or failed");
      }
      if (t instanceof ReconfigurationTimeoutException) {
        return Status.FAILED_PRECONDITION.withDescription(
            what
                + " failed: the new member made "
                + "no progress catching up (is it running, started to join, and reachable from the "
                + "leader?): "
                + t.getMessage());
      }
      if (t instanceof TimeoutIOException) {
        return Status.DEADLINE_EXCEEDED.withDescription(
            what
                + ": no answer from the leader "
                + "within "
                + adminTimeout.toSeconds()
                + " s (a new member may still be catching "
                + "up); it may still take effect: list the members to see");
      }
      if (t instanceof SetConfigurationException) {
        return Status.ABORTED.withDescription(
            what
                + " refused: the configuration is not "
                + "the one this node sees (it changed meanwhile, or this node lags); list the "
                + "members and ask again: "
                + t.getMessage());
      }
    }
    return Status.UNAVAILABLE.withDescription(what + " failed: " + failure);
  }
}
