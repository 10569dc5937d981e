package io.shale.client;

import io.shale.client.proto.AddMemberRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.CompactRequest;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.RemoveMemberRequest;
import io.shale.client.proto.SnapshotRequest;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.TransferLeadershipRequest;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The cluster's administration, through the client's channels and retry policies (etcd's Cluster
 * and Maintenance clients in one): status, membership, leadership, snapshots and compactions.
 * Obtained from {@link ShaleClient#cluster()}; thread-safe.
 *
 * <p>Membership changes go to the leader through the answering node. {@link #snapshot} and {@link
 * #compact} act on the node named (null: the answering node). Reads (status, members) are retried
 * like any call; changes are tried once, within the whole deadline, since a repeated membership
 * change or compaction could fail after the first one succeeded, or act on another node.
 */
public final class ClusterAdmin {
  private final RetryingCall.Settings settings;

  /** For what must not be repeated blindly: membership, leadership, snapshot, compaction. */
  private final RetryingCall.Settings once;

  ClusterAdmin(RetryingCall.Settings settings) {
    this.settings = settings;
    this.once = settings.singleAttempt();
  }

  private ClusterGrpc.ClusterFutureStub stub(io.grpc.Channel ch, long timeoutMillis) {
    return ClusterGrpc.newFutureStub(ch).withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Every member's status, each asked over its own API by the answering node: role, term, commit
   * and applied index, engine summary (L0 files, pending compaction bytes, compaction bytes by key
   * and value, bloom memory per level, ...) and write pressure; a member that could not be asked is
   * listed with {@code reachable = false} and the error. The messages are those of {@code
   * shale/v1/cluster.proto}.
   */
  public CompletableFuture<List<NodeStatus>> statusAsync() {
    return RetryingCall.start(
            settings, "status", (ch, t) -> stub(ch, t).status(StatusRequest.getDefaultInstance()))
        .thenApply(r -> r.getNodesList());
  }

  public List<NodeStatus> status() {
    return ShaleClient.join(statusAsync());
  }

  /**
   * The members and the leader. A node that knows no leader (restarted and not yet reached by the
   * leader, or cut off) is not the last word: the other endpoints are asked in turn, and "no
   * leader" (an empty {@link Members#leaderId}) comes back only when none of them knows one.
   */
  public CompletableFuture<Members> membersAsync() {
    return membersAsync(settings.endpoints().addresses().size() - 1);
  }

  private CompletableFuture<Members> membersAsync(int othersLeft) {
    return RetryingCall.start(
            settings,
            "members",
            (ch, t) -> stub(ch, t).listMembers(ListMembersRequest.getDefaultInstance()))
        .thenApply(ClusterAdmin::members)
        .thenCompose(
            m -> {
              if (!m.leaderId().isEmpty() || othersLeft == 0) {
                return CompletableFuture.completedFuture(m);
              }
              settings.endpoints().passOver(settings.endpoints().preferred());
              return membersAsync(othersLeft - 1)
                  .thenApply(other -> other.leaderId().isEmpty() ? m : other);
            });
  }

  public Members members() {
    return ShaleClient.join(membersAsync());
  }

  /**
   * Adds {@code m} as a voting member; its node must already run, started to join ({@code
   * shale-node --join}). Completes when the new configuration is committed, which waits until the
   * new member has caught up: the answering node waits up to 30 s for the leader, so give such
   * calls a deadline above that (the client's default is 10 s).
   *
   * <p>Fails at once, FAILED_PRECONDITION in the message, when the node does not answer as {@code
   * m.id()} at its API address, nothing listens at its Raft address (staged, a member that never
   * answers would block every other change), or another change is in progress (one at a time, as in
   * etcd; ask again once {@link #members} shows it done). A change whose new member makes no
   * progress fails FAILED_PRECONDITION naming that; one the leader did not answer within 30 s fails
   * DEADLINE_EXCEEDED and may still take effect.
   */
  public CompletableFuture<Members> addMemberAsync(Member m) {
    AddMemberRequest req =
        AddMemberRequest.newBuilder()
            .setMember(
                io.shale.client.proto.Member.newBuilder()
                    .setId(m.id())
                    .setRaftAddress(m.raftAddress())
                    .setApiAddress(m.apiAddress()))
            .build();
    return RetryingCall.start(once, "addMember", (ch, t) -> stub(ch, t).addMember(req))
        .thenApply(ClusterAdmin::members);
  }

  public Members addMember(Member m) {
    return ShaleClient.join(addMemberAsync(m));
  }

  /**
   * Removes member {@code id} if the leader's members are still the ones the answering node sees
   * (ABORTED otherwise: list the members and ask again); refused like {@link #addMember} while
   * another change is in progress. A leader that removes itself steps down.
   */
  public CompletableFuture<Members> removeMemberAsync(String id) {
    RemoveMemberRequest req = RemoveMemberRequest.newBuilder().setId(id).build();
    return RetryingCall.start(once, "removeMember", (ch, t) -> stub(ch, t).removeMember(req))
        .thenApply(ClusterAdmin::members);
  }

  public Members removeMember(String id) {
    return ShaleClient.join(removeMemberAsync(id));
  }

  /** Makes {@code id} the leader; completes once the answering node knows it leads. */
  public CompletableFuture<Members> transferLeadershipAsync(String id) {
    TransferLeadershipRequest req = TransferLeadershipRequest.newBuilder().setId(id).build();
    return RetryingCall.start(
            once, "transferLeadership", (ch, t) -> stub(ch, t).transferLeadership(req))
        .thenApply(ClusterAdmin::members);
  }

  public Members transferLeadership(String id) {
    return ShaleClient.join(transferLeadershipAsync(id));
  }

  /** Takes a snapshot on {@code nodeId} (null: the answering node); returns its log index. */
  public CompletableFuture<Long> snapshotAsync(String nodeId) {
    SnapshotRequest req =
        SnapshotRequest.newBuilder().setNodeId(nodeId == null ? "" : nodeId).build();
    return RetryingCall.start(once, "snapshot", (ch, t) -> stub(ch, t).snapshot(req))
        .thenApply(r -> r.getIndex());
  }

  public long snapshot(String nodeId) {
    return ShaleClient.join(snapshotAsync(nodeId));
  }

  /** Compacts the whole key range on {@code nodeId} (null: the answering node), waiting for it. */
  public CompletableFuture<Void> compactAsync(String nodeId) {
    CompactRequest req =
        CompactRequest.newBuilder().setNodeId(nodeId == null ? "" : nodeId).build();
    return RetryingCall.start(once, "compact", (ch, t) -> stub(ch, t).compact(req))
        .thenApply(r -> null);
  }

  public void compact(String nodeId) {
    ShaleClient.join(compactAsync(nodeId));
  }

  /**
   * Holds new compactions and blob GC on {@code nodeId} (null: the answering node) until {@link
   * #resumeCompactions} or the node's restart; running ones finish. Level 0 then grows with every
   * flush until write pressure delays and stops writes: for maintenance windows and for tests of
   * throttling, not for normal running.
   */
  public CompletableFuture<Void> pauseCompactionsAsync(String nodeId) {
    return compactionControl(nodeId, CompactRequest.Action.PAUSE, "pauseCompactions");
  }

  public void pauseCompactions(String nodeId) {
    ShaleClient.join(pauseCompactionsAsync(nodeId));
  }

  /** Lets {@code nodeId}'s compactions run again after {@link #pauseCompactions}. */
  public CompletableFuture<Void> resumeCompactionsAsync(String nodeId) {
    return compactionControl(nodeId, CompactRequest.Action.RESUME, "resumeCompactions");
  }

  public void resumeCompactions(String nodeId) {
    ShaleClient.join(resumeCompactionsAsync(nodeId));
  }

  private CompletableFuture<Void> compactionControl(
      String nodeId, CompactRequest.Action action, String operation) {
    CompactRequest req =
        CompactRequest.newBuilder()
            .setNodeId(nodeId == null ? "" : nodeId)
            .setAction(action)
            .build();
    // Pausing or resuming twice is harmless, so these may be retried like reads.
    return RetryingCall.start(settings, operation, (ch, t) -> stub(ch, t).compact(req))
        .thenApply(r -> null);
  }

  private static Members members(MembersResponse r) {
    return new Members(
        r.getMembersList().stream()
            .map(m -> new Member(m.getId(), m.getRaftAddress(), m.getApiAddress()))
            .toList(),
        r.getLeaderId());
  }
}
