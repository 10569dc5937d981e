package io.shale.node.ratis;

import java.time.Duration;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.raftlog.RaftLogIOException;

/**
 * Ratis's gRPC log sender for one follower, which also tells the follower promptly that its entries
 * are committed: when the leader's commit index has moved past what the follower was told and no
 * entry comes within {@code delay} to carry it, an empty append (a heartbeat) carries it, as etcd's
 * leader does. Ratis 3.3.0 wakes the sender on a commit but sends nothing without entries, so the
 * follower learned of the commit with the next write or the next periodic heartbeat (half the
 * minimum election timeout later): with sparse writes a follower applied, answered linearizable
 * reads and delivered watch events up to that late
 * (docs/upstream/ratis-commit-waits-for-heartbeat.md). The delay spares the extra message when
 * writes follow each other closely: one client writing in a loop would otherwise cost every write
 * an empty append to each follower.
 *
 * <p>Invariants: at most one such update per follower per commit index, and none while an append
 * with entries is in flight (Ratis sends a heartbeat then without a previous entry, so it could not
 * carry the index; the reply to that append wakes the sender again). Ratis calls both overrides on
 * the sender's own thread only.
 */
final class PromptCommitAppender extends GrpcLogAppender {
  private static final long NOT_DUE = Long.MIN_VALUE;

  private final long delayNanos;

  /** The highest commit index sent to this follower. */
  private long commitSent = -1;

  /** When the pending update fell due (System.nanoTime), or NOT_DUE. */
  private long dueSince = NOT_DUE;

  PromptCommitAppender(
      RaftServer.Division server, LeaderState leader, FollowerInfo follower, Duration delay) {
    super(server, leader, follower);
    this.delayNanos = delay.toNanos();
  }

  @Override
  public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat)
      throws RaftLogIOException {
    AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, heartbeat);
    if (request != null) {
      commitSent = Math.max(commitSent, request.getLeaderCommit());
      dueSince = NOT_DUE;
      return request;
    }
    if (!updateDue()) {
      dueSince = NOT_DUE;
      return null;
    }
    long now = System.nanoTime();
    if (dueSince == NOT_DUE) {
      dueSince = now;
    }
    if (now - dueSince < delayNanos) {
      return null; // getWaitTimeMs wakes the sender when the delay is up
    }
    // Counted as sent whatever the heartbeat can carry (nothing when the follower's previous
    // entry is gone from the log), so that a follower needing a snapshot gets one, not a stream.
    commitSent = getRaftLog().getLastCommittedIndex();
    dueSince = NOT_DUE;
    return super.newAppendEntriesRequest(callId, true);
  }

  @Override
  public long getWaitTimeMs() {
    long wait = super.getWaitTimeMs();
    if (dueSince == NOT_DUE) {
      return wait;
    }
    if (!updateDue()) {
      dueSince = NOT_DUE; // an append carried it meanwhile
      return wait;
    }
    long leftNanos = dueSince + delayNanos - System.nanoTime();
    long leftMillis = leftNanos <= 0 ? 0 : (leftNanos + 999_999) / 1_000_000;
    return Math.min(wait, leftMillis);
  }

  private boolean updateDue() {
    long commit = getRaftLog().getLastCommittedIndex();
    return commit > commitSent
        && commit > getFollower().getCommitIndex()
        && !hasPendingDataRequests();
  }
}
