package io.shale.node.ratis;

import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.raftlog.RaftLogIOException;

/**
 * Ratis's gRPC log sender for one follower, which also tells the follower promptly that its entries
 * are committed: when the leader's commit index has moved past what the follower was told and there
 * is no entry to carry it, an empty append (a heartbeat) carries it at once, as etcd's leader does.
 * Ratis 3.3.0 wakes the sender on a commit but sends nothing without entries, so the follower
 * learned of the commit with the next write or the next periodic heartbeat (half the minimum
 * election timeout later): with sparse writes a follower applied, answered linearizable reads and
 * delivered watch events up to that late (docs/upstream/ratis-commit-waits-for-heartbeat.md).
 *
 * <p>Invariant: at most one such update per follower per commit index, and none while an append
 * with entries is in flight (Ratis sends a heartbeat then without a previous entry, so it could not
 * carry the index); the reply to that append wakes the sender again. Called by Ratis only on the
 * sender's own thread, under its lock.
 */
final class PromptCommitAppender extends GrpcLogAppender {
  /** The highest commit index sent to this follower; touched under the sender's own lock. */
  private long commitSent = -1;

  PromptCommitAppender(RaftServer.Division server, LeaderState leader, FollowerInfo follower) {
    super(server, leader, follower);
  }

  @Override
  public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat)
      throws RaftLogIOException {
    AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, heartbeat);
    if (request != null) {
      commitSent = Math.max(commitSent, request.getLeaderCommit());
      return request;
    }
    long commit = getRaftLog().getLastCommittedIndex();
    if (commit > commitSent
        && commit > getFollower().getCommitIndex()
        && !hasPendingDataRequests()) {
      // Counted as sent whatever the heartbeat can carry (nothing when the follower's previous
      // entry is gone from the log), so that a follower needing a snapshot gets one, not a stream.
      commitSent = commit;
      return super.newAppendEntriesRequest(callId, true);
    }
    return null;
  }
}
