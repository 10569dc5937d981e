package io.shale.node.api;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.AddMemberRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.CompactRequest;
import io.shale.client.proto.CompactResponse;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.Member;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.RemoveMemberRequest;
import io.shale.client.proto.ResponseHeader;
import io.shale.client.proto.SnapshotRequest;
import io.shale.client.proto.SnapshotResponse;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.StatusResponse;
import io.shale.client.proto.TransferLeadershipRequest;
import io.shale.engine.Engine;
import io.shale.node.statemachine.ShaleStateMachine;
import io.shale.node.transport.PeerChannels;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.server.RaftServer;

/**
 * The public administration API of one node (shale.v1.Cluster). Membership changes and leadership
 * transfers go to the leader through this node's Ratis client; Status asks every member over its
 * own API (one second each), so one call shows the whole cluster.
 */
public final class ClusterService extends ClusterGrpc.ClusterImplBase {
  /**
   * How long this node waits for the leader's answer to a membership change, leadership transfer or
   * snapshot. The leader itself stages a new member for as long as it makes progress, which can
   * mean installing tens of megabytes; callers should allow more than this.
   */
  private final Duration adminTimeout;

  private final RaftServer.Division division;
  private final ShaleStateMachine stateMachine;
  private final AdminClients adminClients;
  private final PeerChannels peers;

  public ClusterService(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      AdminClients adminClients,
      PeerChannels peers,
      Duration adminTimeout) {
    this.adminTimeout = adminTimeout;
    this.division = division;
    this.stateMachine = stateMachine;
    this.adminClients = adminClients;
    this.peers = peers;
  }

  /** Builds the Raft client for one administration call. */
  @FunctionalInterface
  public interface AdminClients {
    /** A client over {@code members}, sending first to {@code leader} (null: found by asking). */
    RaftClient over(RaftGroup members, RaftPeerId leader);
  }

  /**
   * A client over the members this node sees now (the leader may be one added since this node
   * started), aimed at the leader it knows, so that a request waiting its whole timeout means that
   * leader did not answer, not that a stale one was asked.
   */
  private RaftClient adminClient() {
    return adminClients.over(division.getGroup(), division.getInfo().getLeaderId());
  }

  private String selfId() {
    return division.getId().toString();
  }

  private ResponseHeader header() {
    return ResponseHeader.newBuilder()
        .setNodeId(selfId())
        .setTerm(division.getInfo().getCurrentTerm())
        .setAppliedIndex(division.getInfo().getLastAppliedIndex())
        .build();
  }

  private Collection<RaftPeer> members() {
    return division.getRaftConf().getCurrentPeers();
  }

  @Override
  public void status(StatusRequest request, StreamObserver<StatusResponse> out) {
    String refusal = request.getLocalOnly() ? closedGroupOrNull() : notServing();
    if (refusal != null) {
      out.onError(Status.UNAVAILABLE.withDescription(refusal).asException());
      return;
    }
    StatusResponse.Builder b = StatusResponse.newBuilder().setHeader(header());
    if (request.getLocalOnly()) {
      b.addNodes(NodeStatusReport.of(division, stateMachine.engine()));
    } else {
      for (RaftPeer p : members()) {
        if (p.getId().equals(division.getId())) {
          b.addNodes(NodeStatusReport.of(division, stateMachine.engine()));
          continue;
        }
        try {
          StatusResponse r =
              ClusterGrpc.newBlockingStub(peers.to(p.getAddress()))
                  .withDeadlineAfter(1, TimeUnit.SECONDS)
                  .status(StatusRequest.newBuilder().setLocalOnly(true).build());
          b.addAllNodes(r.getNodesList());
        } catch (RuntimeException e) {
          b.addNodes(
              NodeStatus.newBuilder()
                  .setMember(NodeStatusReport.member(p))
                  .setReachable(false)
                  .setError(e.getMessage() == null ? e.toString() : e.getMessage()));
        }
      }
    }
    out.onNext(b.build());
    out.onCompleted();
  }

  @Override
  public void listMembers(ListMembersRequest request, StreamObserver<MembersResponse> out) {
    if (refused(out)) {
      return;
    }
    out.onNext(membersResponse());
    out.onCompleted();
  }

  /**
   * Why this node must not answer for the cluster (members, leader, membership changes,
   * cluster-wide status), or null when it may: its Raft group has stopped, or it is not in its
   * configuration (started to join and not added yet, or removed). Such a node's view is not the
   * cluster's: a joining node knows no members and no leader, a stopped one keeps the view it had.
   * Answered as data, an empty leader read as "no leader elected", and a client that got answers
   * kept asking that node for good (ClusterServiceTest; docs/postmortems/16). UNAVAILABLE sends
   * clients on to another endpoint, as etcd's removed members refuse requests.
   */
  private String notServing() {
    String closed = closedGroupOrNull();
    if (closed != null) {
      return closed;
    }
    if (division.getRaftConf().getCurrentPeers().stream()
        .noneMatch(p -> p.getId().equals(division.getId()))) {
      return "node "
          + division.getId()
          + " is not a member of the cluster (started to join and"
          + " not added yet, or removed): ask a member";
    }
    return null;
  }

  /** What a node whose Raft group has stopped answers, or null while the group runs. */
  private String closedGroupOrNull() {
    if (division.getInfo().isAlive()) {
      return null;
    }
    return "node "
        + division.getId()
        + ": its Raft group is "
        + division.getInfo().getLifeCycleState()
        + " (Ratis stops a node's group when it finds"
        + " the node outside the configuration); it serves nothing until restarted";
  }

  /** Answers UNAVAILABLE and returns true when this node must not answer for the cluster. */
  private boolean refused(StreamObserver<?> out) {
    String refusal = notServing();
    if (refusal == null) {
      return false;
    }
    out.onError(Status.UNAVAILABLE.withDescription(refusal).asException());
    return true;
  }

  private MembersResponse membersResponse() {
    MembersResponse.Builder b = MembersResponse.newBuilder().setHeader(header());
    members().stream().map(NodeStatusReport::member).forEach(b::addMembers);
    RaftPeerId leader = division.getInfo().getLeaderId();
    return b.setLeaderId(leader == null ? "" : leader.toString()).build();
  }

  @Override
  public void addMember(AddMemberRequest request, StreamObserver<MembersResponse> out) {
    if (refused(out)) {
      return;
    }
    Member m = request.getMember();
    if (m.getId().isEmpty() || m.getRaftAddress().isEmpty() || m.getApiAddress().isEmpty()) {
      out.onError(
          Status.INVALID_ARGUMENT
              .withDescription("a member needs id, raft_address and " + "api_address")
              .asException());
      return;
    }
    String badAddress = MemberProbe.addressProblem("raft_address", m.getRaftAddress());
    if (badAddress == null) {
      badAddress = MemberProbe.addressProblem("api_address", m.getApiAddress());
    }
    if (badAddress != null) {
      out.onError(Status.INVALID_ARGUMENT.withDescription(badAddress).asException());
      return;
    }
    if (members().stream().anyMatch(p -> p.getId().toString().equals(m.getId()))) {
      out.onError(
          Status.ALREADY_EXISTS.withDescription(m.getId() + " is already a member").asException());
      return;
    }
    String unready = MemberProbe.problem(m, peers);
    if (unready != null) {
      out.onError(
          Status.FAILED_PRECONDITION
              .withDescription("adding " + m.getId() + " refused: " + unready)
              .asException());
      return;
    }
    RaftPeer added =
        RaftPeer.newBuilder()
            .setId(m.getId())
            .setAddress(m.getRaftAddress())
            .setDataStreamAddress(m.getApiAddress())
            .build();
    // ADD: the leader adds the peer to its own current configuration, whatever this node saw.
    reconfigure(
        SetConfigurationRequest.Arguments.newBuilder()
            .setServersInNewConf(List.of(added))
            .setMode(SetConfigurationRequest.Mode.ADD)
            .build(),
        "adding " + m.getId(),
        out);
  }

  @Override
  public void removeMember(RemoveMemberRequest request, StreamObserver<MembersResponse> out) {
    if (refused(out)) {
      return;
    }
    List<RaftPeer> current = List.copyOf(members());
    if (current.stream().noneMatch(p -> p.getId().toString().equals(request.getId()))) {
      out.onError(
          Status.NOT_FOUND.withDescription(request.getId() + " is not a member").asException());
      return;
    }
    if (current.size() == 1) {
      out.onError(
          Status.FAILED_PRECONDITION
              .withDescription("cannot remove the last member")
              .asException());
      return;
    }
    reconfigure(removal(current, request.getId()), "removing " + request.getId(), out);
  }

  /**
   * The change that removes {@code id} from {@code current}, applied only if the leader's
   * configuration still is {@code current}. This node's view may be behind the leader's (a member
   * added back a moment ago): set unconditionally, "current minus id" from a stale view removed
   * that other member too (ClusterServiceTest; docs/postmortems/04).
   */
  public static SetConfigurationRequest.Arguments removal(List<RaftPeer> current, String id) {
    List<RaftPeer> next = current.stream().filter(p -> !p.getId().toString().equals(id)).toList();
    return SetConfigurationRequest.Arguments.newBuilder()
        .setServersInCurrentConf(current)
        .setServersInNewConf(next)
        .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
        .build();
  }

  private void reconfigure(
      SetConfigurationRequest.Arguments change, String what, StreamObserver<MembersResponse> out) {
    try (RaftClient raft = adminClient()) {
      RaftClientReply r = raft.admin().setConfiguration(change);
      if (!r.isSuccess()) {
        out.onError(refusal(what, r.getException()).asException());
        return;
      }
      out.onNext(membersResponse());
      out.onCompleted();
    } catch (IOException e) {
      out.onError(refusal(what, e).asException());
    }
  }

  private Status refusal(String what, Throwable failure) {
    return StatusMapper.membershipRefusal(what, failure, adminTimeout);
  }

  @Override
  public void transferLeadership(
      TransferLeadershipRequest request, StreamObserver<MembersResponse> out) {
    if (refused(out)) {
      return;
    }
    if (members().stream().noneMatch(p -> p.getId().toString().equals(request.getId()))) {
      out.onError(
          Status.NOT_FOUND.withDescription(request.getId() + " is not a member").asException());
      return;
    }
    try (RaftClient raft = adminClient()) {
      RaftClientReply r =
          raft.admin()
              .transferLeadership(RaftPeerId.valueOf(request.getId()), adminTimeout.toMillis());
      if (!r.isSuccess()) {
        out.onError(
            Status.UNAVAILABLE
                .withDescription(
                    "transferring leadership to "
                        + request.getId()
                        + " failed: "
                        + r.getException())
                .asException());
        return;
      }
      // The answer names the new leader: wait (briefly) until this node has heard from it.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!request.getId().equals(String.valueOf(division.getInfo().getLeaderId()))
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      out.onNext(membersResponse());
      out.onCompleted();
    } catch (IOException e) {
      out.onError(
          Status.UNAVAILABLE
              .withDescription("transferring leadership to " + request.getId() + " failed: " + e)
              .asException());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      out.onError(Status.CANCELLED.withDescription("interrupted").asException());
    }
  }

  @Override
  public void snapshot(SnapshotRequest request, StreamObserver<SnapshotResponse> out) {
    String target = request.getNodeId().isEmpty() ? selfId() : request.getNodeId();
    // The target flushes its own engine first, so the call goes to it.
    if (forwarded(
        target,
        out,
        stub ->
            stub.withDeadlineAfter(adminTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .snapshot(request.toBuilder().setNodeId(target).build()))) {
      return;
    }
    // A snapshot Ratis takes holds only what the engine has made durable (it never stalls Ratis's
    // applier for a flush), so an asked-for one flushes first, here, to hold every write applied
    // before the call.
    Engine engine = stateMachine.engine();
    if (engine != null) {
      engine.flush();
    }
    try (RaftClient raft = adminClient()) {
      // Through Ratis, so that it records the snapshot index and may purge the log.
      RaftClientReply r =
          raft.getSnapshotManagementApi(RaftPeerId.valueOf(target))
              .create(1, adminTimeout.minusSeconds(5).toMillis()); // the node's answer comes first
      if (!r.isSuccess()) {
        out.onError(
            Status.UNAVAILABLE
                .withDescription("snapshot on " + target + " failed: " + r.getException())
                .asException());
        return;
      }
      out.onNext(
          SnapshotResponse.newBuilder().setHeader(header()).setIndex(r.getLogIndex()).build());
      out.onCompleted();
    } catch (IOException e) {
      out.onError(
          Status.UNAVAILABLE
              .withDescription("snapshot on " + target + " failed: " + e)
              .asException());
    }
  }

  /**
   * Sends a call about another node to that node's own Cluster service (on its Raft port) and
   * answers {@code out} with its reply or status; false, doing nothing, if {@code target} is this
   * node.
   */
  private <R> boolean forwarded(
      String target,
      StreamObserver<R> out,
      java.util.function.Function<ClusterGrpc.ClusterBlockingStub, R> call) {
    if (target.equals(selfId())) {
      return false;
    }
    RaftPeer p =
        members().stream()
            .filter(m -> m.getId().toString().equals(target))
            .findFirst()
            .orElse(null);
    if (p == null) {
      out.onError(Status.NOT_FOUND.withDescription(target + " is not a member").asException());
      return true;
    }
    try {
      out.onNext(call.apply(ClusterGrpc.newBlockingStub(peers.to(p.getAddress()))));
      out.onCompleted();
    } catch (StatusRuntimeException e) {
      out.onError(e);
    }
    return true;
  }

  @Override
  public void compact(CompactRequest request, StreamObserver<CompactResponse> out) {
    String target = request.getNodeId().isEmpty() ? selfId() : request.getNodeId();
    if (forwarded(
        target, out, stub -> stub.compact(request.toBuilder().setNodeId(target).build()))) {
      return;
    }
    Engine e = stateMachine.engine();
    if (e == null) {
      out.onError(
          Status.UNAVAILABLE.withDescription(selfId() + " is installing a snapshot").asException());
      return;
    }
    switch (request.getAction()) {
      case PAUSE -> e.pauseCompactions();
      case RESUME -> e.resumeCompactions();
      case COMPACT_RANGE ->
          e.compactRange(
              request.getStart().isEmpty() ? null : request.getStart().toByteArray(),
              request.getEnd().isEmpty() ? null : request.getEnd().toByteArray());
      default -> {
        out.onError(
            Status.INVALID_ARGUMENT
                .withDescription("unknown compact action " + request.getActionValue())
                .asException());
        return;
      }
    }
    out.onNext(
        CompactResponse.newBuilder().setHeader(header()).setPaused(e.compactionsPaused()).build());
    out.onCompleted();
  }
}
