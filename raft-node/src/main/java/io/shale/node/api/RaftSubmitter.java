package io.shale.node.api;

import io.grpc.StatusException;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Messages;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import io.shale.node.statemachine.ShaleStateMachine;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.client.RaftClient;
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
  private final RaftClient raft;
  private final StatusMapper statuses;

  /** The client id of requests this node submits to its own server when it leads. */
  private final ClientId localClientId = ClientId.randomId();

  private final AtomicLong callIds = new AtomicLong();

  RaftSubmitter(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      RaftClient raft,
      StatusMapper statuses) {
    this.division = division;
    this.stateMachine = stateMachine;
    this.raft = raft;
    this.statuses = statuses;
  }

  /** Appends one log entry and returns the state machine's reply once it is applied. */
  Reply write(Command c) throws StatusException {
    Message message = Messages.of(CommandCodec.encode(c));
    RaftClientReply r = local(message, RaftClientRequest.writeRequestType());
    if (r == null) {
      try {
        r = CallRunner.awaitWithinDeadline(raft.async().send(message), "write", true);
      } catch (ExecutionException e) {
        // The client fails the future with a state machine's refusal rather than returning it.
        throw statuses.writeFailure(e.getCause() instanceof Exception x ? x : e);
      }
    }
    if (!r.isSuccess()) {
      throw statuses.writeFailure(r.getException());
    }
    return Reply.decode(r.getMessage().getContent().toByteArray());
  }

  /** Answers {@code q} linearizably (through the leader's read index) or, if stale, locally. */
  Reply read(Query q, boolean stale) throws IOException, StatusException {
    Message m = Messages.of(Query.encode(q));
    if (stale) {
      try {
        return Reply.decode(stateMachine.query(m).join().getContent().toByteArray());
      } catch (CompletionException e) {
        if (e.getCause() instanceof IllegalArgumentException bad) {
          throw bad;
        }
        // The engine is closing or being swapped for an installed snapshot: transient.
        throw StatusMapper.unavailable(
            "this replica cannot serve reads right now (closing or installing a snapshot); retry",
            e.getCause());
      }
    }
    RaftClientReply r = local(m, RaftClientRequest.readRequestType());
    if (r == null) {
      try {
        r = CallRunner.awaitWithinDeadline(raft.async().sendReadOnly(m), "read", false);
      } catch (ExecutionException e) {
        throw StatusMapper.unavailable(
            "the read could not be served: " + e.getCause(), e.getCause());
      }
    }
    if (!r.isSuccess()) {
      throw StatusMapper.unavailable(
          "the read could not be served: " + r.getException(), r.getException());
    }
    return Reply.decode(r.getMessage().getContent().toByteArray());
  }

  /**
   * Submits {@code message} to this node's own Raft server if it is the leader; null when it is not
   * (or stopped leading meanwhile), so the caller goes through the Ratis client instead. Requests
   * carry this node's client id and increasing call ids, so Ratis's retry cache never confuses two
   * of them.
   */
  private RaftClientReply local(Message message, RaftClientRequest.Type type)
      throws StatusException {
    if (!division.getInfo().isLeader()) {
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
    RaftClientReply r;
    try {
      r =
          CallRunner.awaitWithinDeadline(
              division.getRaftServer().submitClientRequestAsync(request),
              type.isReadOnly() ? "read" : "write",
              !type.isReadOnly());
    } catch (ExecutionException | IOException e) {
      return null; // let the Ratis client (with its retry policy) handle it
    }
    if (r.getNotLeaderException() != null
        || r.getException() instanceof LeaderNotReadyException
        || r.getException() instanceof LeaderSteppingDownException
        || r.getException() instanceof ReadIndexException) {
      return null;
    }
    return r;
  }
}
