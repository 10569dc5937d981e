package io.shale.node.api;

import io.grpc.StatusException;
import io.shale.node.ratis.ForwardingClient;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Messages;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import io.shale.node.statemachine.ShaleStateMachine;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.server.RaftServer;

/**
 * Takes commands and queries to Raft: straight to this node's own Raft server when it leads (no
 * client hop), else through the node's Ratis client, which finds the leader and follows leader
 * changes. Stale reads are answered from this node's applied state. Failures come back as gRPC
 * statuses through {@link StatusMapper}.
 *
 * <p>Every wait ends at the call's deadline ({@link CallRunner#remainingNanos}): a write that has
 * not applied by then is DEADLINE_EXCEEDED and may still apply, which its request id makes safe to
 * retry. The Ratis client's own retries go on in the background within its retry policy.
 */
final class RaftSubmitter {
  private final RaftServer.Division division;
  private final ShaleStateMachine stateMachine;
  private final ForwardingClient raft;
  private final StatusMapper statuses;

  /** The client id of requests this node submits to its own server when it leads. */
  private final ClientId localClientId = ClientId.randomId();

  private final AtomicLong callIds = new AtomicLong();

  /** Whether a follower answers linearizable reads itself, after a read index from the leader. */
  private final boolean followerReads;

  /**
   * Where replies from Ratis are taken up: never on Ratis's own threads (its apply thread completes
   * many futures), where a reply's work, or a resend through the client that may wait for room,
   * would hold up applying or deadlock.
   */
  private final Executor replies;

  /** Linearizable reads answered here share read indexes. */
  private final ReadBarrier reads = new ReadBarrier(this::readIndexBarrier);

  RaftSubmitter(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      ForwardingClient raft,
      StatusMapper statuses,
      boolean followerReads,
      Executor replies) {
    this.followerReads = followerReads;
    this.replies = replies;
    this.division = division;
    this.stateMachine = stateMachine;
    this.raft = raft;
    this.statuses = statuses;
  }

  /** Appends one log entry and returns the state machine's reply once it is applied. */
  Reply write(Command c) throws StatusException {
    return awaitReply(writeAsync(c), "write", true);
  }

  /**
   * Appends one log entry; the future completes with the state machine's reply once it is applied,
   * or fails with the gRPC status to answer (in a {@link CompletionException}).
   */
  CompletableFuture<Reply> writeAsync(Command c) {
    Message message = Messages.of(CommandCodec.encode(c));
    return submit(message, RaftClientRequest.writeRequestType())
        .thenApply(
            r -> {
              if (!r.isSuccess()) {
                throw new CompletionException(statuses.writeFailure(r.getException()));
              }
              return Reply.decode(r.getMessage().getContent().toByteArray());
            });
  }

  /** Answers {@code q} linearizably (through a read index) or, if stale, locally. */
  Reply read(Query q, boolean stale) throws StatusException {
    return awaitReply(readAsync(q, stale), "read", false);
  }

  /**
   * Answers {@code q}: a stale read from this node's applied state at once; a linearizable one
   * after a read index, which this node gets itself when it leads (under its lease, or after a
   * heartbeat round) or, as a follower, from the leader ({@code followerReads}); else the read goes
   * to the leader through the Ratis client. The future fails with the gRPC status to answer.
   */
  CompletableFuture<Reply> readAsync(Query q, boolean stale) {
    Message m = Messages.of(Query.encode(q));
    if (stale) {
      return localQuery(m);
    }
    if (mayServeReadsHere()) {
      // Many reads share one read index; if this node cannot get one (a leader change), the read
      // goes to the leader.
      return reads
          .await()
          .handle((ok, e) -> e == null ? localQuery(m) : linearizableElsewhere(m))
          .thenCompose(r -> r);
    }
    return linearizableElsewhere(m);
  }

  /**
   * Answers {@code q} on the leader, linearizably: here when this node leads, else through the
   * Ratis client, which sends it to the leader (never answered by a follower, whatever {@code
   * followerReads} says): for what only the leader knows, such as the time a lease has left.
   */
  CompletableFuture<Reply> readOnLeaderAsync(Query q) {
    Message m = Messages.of(Query.encode(q));
    if (division.getInfo().isLeader()) {
      return reads
          .await()
          .handle((ok, e) -> e == null ? localQuery(m) : onLeader(m))
          .thenCompose(r -> r);
    }
    return onLeader(m);
  }

  private CompletableFuture<Reply> onLeader(Message m) {
    return readReply(viaClient(m, RaftClientRequest.readRequestType()));
  }

  /** A read's reply, or the read's failure as UNAVAILABLE. */
  private static CompletableFuture<Reply> readReply(CompletableFuture<RaftClientReply> reply) {
    return reply.thenApply(
        r -> {
          if (!r.isSuccess()) {
            throw new CompletionException(
                StatusMapper.unavailable(
                    "the read could not be served: " + r.getException(), r.getException()));
          }
          return Reply.decode(r.getMessage().getContent().toByteArray());
        });
  }

  /** A linearizable read through Ratis's read-only path (this node's server, or the leader). */
  private CompletableFuture<Reply> linearizableElsewhere(Message m) {
    return readReply(submit(m, RaftClientRequest.readRequestType()));
  }

  /** Answers from this node's applied state as it is. */
  private CompletableFuture<Reply> localQuery(Message m) {
    return stateMachine
        .query(m)
        .handle(
            (r, e) -> {
              if (e == null) {
                return Reply.decode(r.getContent().toByteArray());
              }
              Throwable cause = unwrap(e);
              if (cause instanceof IllegalArgumentException bad) {
                throw new CompletionException(bad);
              }
              // The engine is closing or being swapped for an installed snapshot: transient.
              throw new CompletionException(
                  StatusMapper.unavailable(
                      "this replica cannot serve reads right now (closing or installing a"
                          + " snapshot); retry",
                      cause));
            });
  }

  /** Whether this node gets read indexes itself: it leads, or follows a known leader. */
  private boolean mayServeReadsHere() {
    var info = division.getInfo();
    return info.isLeader() || (followerReads && info.getLeaderId() != null);
  }

  /**
   * One read-index barrier: a linearizable read of this node's write pressure (small) through its
   * own server, which completes once this node has applied up to the leader's commit index.
   */
  private CompletableFuture<?> readIndexBarrier() {
    CompletableFuture<RaftClientReply> f = local(BARRIER, RaftClientRequest.readRequestType());
    if (f == null) {
      return CompletableFuture.failedFuture(new IOException("this node serves no reads now"));
    }
    return f.thenApplyAsync(
        r -> {
          if (!r.isSuccess() || !servedHere(r)) {
            throw new CompletionException(
                new IOException("no read index here: " + r.getException()));
          }
          return r;
        },
        replies);
  }

  private static final Message BARRIER = Messages.of(Query.encode(new Query.Pressure()));

  /**
   * Waits for {@code reply} within the call's deadline and returns it, throwing the status it
   * failed with.
   */
  static <T> T awaitReply(CompletableFuture<T> reply, String what, boolean isWrite)
      throws StatusException {
    try {
      return CallRunner.awaitWithinDeadline(reply, what, isWrite);
    } catch (ExecutionException e) {
      Throwable cause = unwrap(e);
      if (cause instanceof StatusException s) {
        throw s;
      }
      if (cause instanceof RuntimeException r) {
        throw r; // a bad request (IllegalArgumentException) or a bug: the caller maps it
      }
      throw StatusMapper.unavailable(String.valueOf(cause), cause);
    }
  }

  static Throwable unwrap(Throwable e) {
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /**
   * Submits {@code message} to this node's own Raft server when it can take it (a write when it
   * leads, a linearizable read when it leads or, with follower reads, when it follows a known
   * leader), else, or when that attempt meets a leader change, through the Ratis client.
   */
  private CompletableFuture<RaftClientReply> submit(Message message, RaftClientRequest.Type type) {
    CompletableFuture<RaftClientReply> local = local(message, type);
    if (local == null) {
      return viaClient(message, type);
    }
    return local
        .handleAsync(
            (r, e) -> {
              if (e != null && unwrap(e) instanceof IllegalArgumentException bad) {
                // The state machine refused the request itself: no other node would answer it.
                return CompletableFuture.<RaftClientReply>failedFuture(bad);
              }
              return e == null && servedHere(r) ? CompletableFuture.completedFuture(r) : null;
            },
            replies)
        .thenCompose(r -> r != null ? r : viaClient(message, type));
  }

  private CompletableFuture<RaftClientReply> viaClient(
      Message message, RaftClientRequest.Type type) {
    boolean read = type.isReadOnly();
    // Reads unordered: a failed read in the client's ordered stream would close it for every
    // later request.
    return (read ? raft.sendReadOnly(message) : raft.send(message))
        .handleAsync(
            (r, e) -> {
              if (e == null) {
                return r;
              }
              Throwable cause = unwrap(e);
              // The client fails the future with a state machine's refusal rather than returning
              // it.
              throw new CompletionException(
                  read
                      ? StatusMapper.unavailable("the read could not be served: " + cause, cause)
                      : statuses.writeFailure(cause));
            },
            replies);
  }

  /** Whether a reply from this node's own server is the answer (not a leader change to retry). */
  private static boolean servedHere(RaftClientReply r) {
    return r.getNotLeaderException() == null
        && !(r.getException() instanceof LeaderNotReadyException)
        && !(r.getException() instanceof LeaderSteppingDownException)
        && !(r.getException() instanceof ReadIndexException);
  }

  /**
   * Submits {@code message} to this node's own Raft server if it may serve it; null when not, so
   * the caller goes through the Ratis client. Requests carry this node's client id and increasing
   * call ids, so Ratis's retry cache never confuses two of them.
   */
  private CompletableFuture<RaftClientReply> local(Message message, RaftClientRequest.Type type) {
    boolean leads = division.getInfo().isLeader();
    if (!leads
        && !(type.isReadOnly() && followerReads && division.getInfo().getLeaderId() != null)) {
      return null;
    }
    RaftClientRequest request =
        RaftClientRequest.newBuilder()
            .setClientId(localClientId)
            .setServerId(division.getId())
            .setGroupId(division.getMemberId().getGroupId())
            .setCallId(callIds.incrementAndGet())
            .setMessage(message)
            .setType(type)
            .build();
    try {
      return division.getRaftServer().submitClientRequestAsync(request);
    } catch (IOException e) {
      return null; // let the Ratis client (with its retry policy) handle it
    }
  }
}
