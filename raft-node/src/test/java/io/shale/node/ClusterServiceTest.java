package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shale.client.proto.AddMemberRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.CompactRequest;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.Member;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.RemoveMemberRequest;
import io.shale.client.proto.SnapshotRequest;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.StatusResponse;
import io.shale.client.proto.TransferLeadershipRequest;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.node.api.ClusterService;
import io.shale.node.api.StatusMapper;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cluster API of a real cluster (status, membership, leadership transfer, snapshot, compact)
 * and the nodes' HTTP endpoints.
 */
class ClusterServiceTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private final ApiChannels channels = new ApiChannels();

  @BeforeEach
  void start() throws Exception {
    cluster = new LocalCluster(dir, 3);
    cluster.leader();
  }

  @AfterEach
  void stop() throws Exception {
    channels.close();
    cluster.close();
  }

  private ManagedChannel channel(String node) {
    return channels.to(cluster, node);
  }

  private static ByteString s(String v) {
    return ByteString.copyFrom(v, StandardCharsets.UTF_8);
  }

  @Test
  void statusShowsEveryNodeWithOneLeader() throws Exception {
    KVGrpc.newBlockingStub(channel("n1"))
        .put(PutRequest.newBuilder().setKey(s("k")).setValue(s("v")).build());
    StatusResponse status =
        ClusterGrpc.newBlockingStub(channel("n2")).status(StatusRequest.getDefaultInstance());
    assertThat(status.getNodesList())
        .extracting(n -> n.getMember().getId())
        .containsExactlyInAnyOrder("n1", "n2", "n3");
    assertThat(status.getNodesList()).filteredOn(n -> n.getRole().equals("LEADER")).hasSize(1);
    for (NodeStatus n : status.getNodesList()) {
      assertThat(n.getReachable()).isTrue();
      assertThat(n.getLeaderId()).isEqualTo(cluster.leader());
      assertThat(n.getTerm()).isPositive();
      assertThat(n.getPressure().getCondition()).isEqualTo("NORMAL");
      assertThat(n.getEngine().getFilesPerLevelCount()).isGreaterThan(1);
    }
    // A stopped node is listed as unreachable, with the reason.
    cluster.stop("n3");
    StatusResponse after =
        ClusterGrpc.newBlockingStub(channel("n1")).status(StatusRequest.getDefaultInstance());
    NodeStatus n3 =
        after.getNodesList().stream()
            .filter(n -> n.getMember().getId().equals("n3"))
            .findFirst()
            .orElseThrow();
    assertThat(n3.getReachable()).isFalse();
    assertThat(n3.getError()).isNotEmpty();
  }

  private static AddMemberRequest addRequest(String id, NodeConfig.Peer p) {
    return AddMemberRequest.newBuilder()
        .setMember(
            Member.newBuilder()
                .setId(id)
                .setRaftAddress(p.raftAddress())
                .setApiAddress(p.apiAddress()))
        .build();
  }

  /** Starts n4 to join and adds it through n2; the members are then n1-n4. */
  private void addJoiningN4() throws Exception {
    NodeConfig.Peer p4 = cluster.newPeer("n4");
    cluster.startJoining("n4");
    MembersResponse added =
        ClusterGrpc.newBlockingStub(channel("n2"))
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .addMember(addRequest("n4", p4));
    assertThat(added.getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3", "n4");
  }

  @Test
  void aFourthNodeIsAddedReceivesTheDataLeadsAndIsRemoved() throws Exception {
    KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(channel("n1"));
    for (int i = 0; i < 50; i++) {
      kv.put(PutRequest.newBuilder().setKey(s("before" + i)).setValue(s("v" + i)).build());
    }
    addJoiningN4();
    ClusterGrpc.ClusterBlockingStub admin = ClusterGrpc.newBlockingStub(channel("n2"));
    kv.put(PutRequest.newBuilder().setKey(s("after")).setValue(s("x")).build());
    // n4 holds what was written before and after it joined.
    KVGrpc.KVBlockingStub n4 = KVGrpc.newBlockingStub(channel("n4"));
    assertThat(n4.get(GetRequest.newBuilder().setKey(s("before7")).build()).getValue())
        .isEqualTo(s("v7"));
    assertThat(n4.get(GetRequest.newBuilder().setKey(s("after")).build()).getValue())
        .isEqualTo(s("x"));

    MembersResponse moved =
        admin
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .transferLeadership(TransferLeadershipRequest.newBuilder().setId("n4").build());
    assertThat(moved.getLeaderId()).isEqualTo("n4");

    admin
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .transferLeadership(TransferLeadershipRequest.newBuilder().setId("n1").build());
    MembersResponse removed =
        admin
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .removeMember(RemoveMemberRequest.newBuilder().setId("n4").build());
    assertThat(removed.getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
    assertThat(
            ClusterGrpc.newBlockingStub(channel("n3"))
                .listMembers(ListMembersRequest.getDefaultInstance())
                .getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
    kv.put(PutRequest.newBuilder().setKey(s("last")).setValue(s("y")).build());
    assertThat(kv.get(GetRequest.newBuilder().setKey(s("last")).build()).getValue())
        .isEqualTo(s("y"));

    assertThatThrownBy(
            () -> admin.removeMember(RemoveMemberRequest.newBuilder().setId("n9").build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
  }

  @Test
  void snapshotAndCompactRunOnTheNamedNode() throws Exception {
    KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(channel("n1"));
    for (int i = 0; i < 20; i++) {
      kv.put(PutRequest.newBuilder().setKey(s("k" + i)).setValue(s("v" + i)).build());
    }
    ClusterGrpc.ClusterBlockingStub admin = ClusterGrpc.newBlockingStub(channel("n1"));
    long index = admin.snapshot(SnapshotRequest.newBuilder().setNodeId("n2").build()).getIndex();
    // n2 may trail the leader by an entry or two: its snapshot is at its own applied index.
    assertThat(index).isGreaterThanOrEqualTo(10);
    var checkpoint = cluster.node("n2").stateMachine().checkpoints().newest();
    assertThat(checkpoint.index()).isEqualTo(index);
    try (Engine copy = Engine.open(checkpoint.directory(), EngineOptions.defaults())) {
      assertThat(copy.persistedAppliedIndex()).isEqualTo(index);
      assertThat(copy.get(s("k0").toByteArray())).isEqualTo(s("v0").toByteArray());
    }
    KVGrpc.KVBlockingStub n3 = KVGrpc.newBlockingStub(channel("n3"));
    GetRequest staleK19 =
        GetRequest.newBuilder().setKey(s("k19")).setConsistency(Consistency.STALE).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!n3.get(staleK19).getFound()) {
      assertThat(System.nanoTime()).as("n3 applied the writes").isLessThan(deadline);
      Thread.sleep(20);
    }
    admin.compact(CompactRequest.newBuilder().setNodeId("n3").build());
    var levels = cluster.node("n3").stateMachine().engine().stats().levels();
    assertThat(levels.get(0).files()).isZero();
    assertThat(levels.stream().mapToInt(l -> l.files()).sum()).isPositive();
    assertThat(n3.get(staleK19).getValue()).isEqualTo(s("v19"));
  }

  @Test
  void httpEndpointsServeMetricsHealthAndReadiness() throws Exception {
    KVGrpc.newBlockingStub(channel("n2"))
        .put(PutRequest.newBuilder().setKey(s("k")).setValue(s("v")).build());
    HttpClient http = HttpClient.newHttpClient();
    for (String id : List.of("n1", "n2", "n3")) {
      int port = cluster.node(id).httpPort();
      assertThat(get(http, port, "/health").statusCode()).isEqualTo(200);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (get(http, port, "/ready").statusCode() != 200) {
        assertThat(System.nanoTime()).as(id + " ready").isLessThan(deadline);
        Thread.sleep(50);
      }
    }
    String metrics = get(http, cluster.node("n2").httpPort(), "/metrics").body();
    assertThat(metrics)
        .contains("shale_raft_term{node=\"n2\"}")
        .contains("shale_raft_role{node=\"n2\",role=\"LEADER\"}")
        .contains("shale_raft_applied_index")
        .contains("lsm_compactions_in_progress")
        .contains("shale_grpc_server_requests_seconds_bucket")
        .contains("method=\"shale.v1.KV/Put\"")
        .contains("status=\"OK\"")
        .containsPattern("(?m)^ratis_\\w+");
    String leaderMetrics = get(http, cluster.node(cluster.leader()).httpPort(), "/metrics").body();
    assertThat(leaderMetrics).contains("shale_raft_replication_lag_entries{follower=");
    // Not ready: a node whose peers are gone cannot know a leader.
    cluster.stop("n1");
    cluster.stop("n2");
    int port = cluster.node("n3").httpPort();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    HttpResponse<String> r;
    while ((r = get(http, port, "/ready")).statusCode() != 503) {
      assertThat(System.nanoTime()).as("n3 not ready without a quorum").isLessThan(deadline);
      Thread.sleep(100);
    }
    assertThat(r.body()).contains("no leader");
    assertThat(get(http, port, "/health").statusCode()).isEqualTo(200);
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * A node started to join and not added yet knows no members and no leader: it refuses to answer
   * for the cluster, so that a client whose endpoint it is goes on to a member. In the long form
   * (run 1012) the nemesis's client kept asking such a node, which answered "no leader" and failed
   * every add, and never reached a member again.
   */
  @Test
  void aNodeNotYetAddedSendsClientsOnToAMember() throws Exception {
    NodeConfig.Peer p4 = cluster.newPeer("n4");
    cluster.startJoining("n4");
    ClusterGrpc.ClusterBlockingStub n4 = ClusterGrpc.newBlockingStub(channel("n4"));
    for (var call :
        List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
            () -> n4.listMembers(ListMembersRequest.getDefaultInstance()),
            () -> n4.addMember(addRequest("n4", p4)),
            () -> n4.status(StatusRequest.getDefaultInstance()),
            () ->
                n4.transferLeadership(
                    TransferLeadershipRequest.newBuilder().setId("n1").build()))) {
      assertThatThrownBy(call)
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(e.getStatus().getDescription()).contains("node n4 is not a member");
              });
    }
    // Its own status, asked of it alone, it still gives.
    assertThat(n4.status(StatusRequest.newBuilder().setLocalOnly(true).build()).getNodesCount())
        .isEqualTo(1);

    List<String> endpoints = new ArrayList<>(List.of(p4.apiAddress()));
    endpoints.addAll(
        List.of("n1", "n2", "n3").stream().map(n -> cluster.peer(n).apiAddress()).toList());
    try (io.shale.client.ShaleClient client =
        io.shale.client.ShaleClient.builder()
            .endpoints(endpoints.toArray(String[]::new))
            .deadline(java.time.Duration.ofSeconds(60))
            .build()) {
      assertThat(client.cluster().members().leaderId()).isNotEmpty();
      io.shale.client.Members added =
          client
              .cluster()
              .addMember(new io.shale.client.Member("n4", p4.raftAddress(), p4.apiAddress()));
      assertThat(added.members())
          .extracting(io.shale.client.Member::id)
          .containsExactlyInAnyOrder("n1", "n2", "n3", "n4");
    }
    // Once a member, it answers.
    assertThat(n4.listMembers(ListMembersRequest.getDefaultInstance()).getMembersCount())
        .isEqualTo(4);
  }

  /**
   * A node whose Raft group Ratis has stopped (as it does to a node that finds itself outside the
   * configuration) says so, instead of answering with the members and leader it had when it
   * stopped: in nemesis run 447 such an answer, with an empty leader, read as "no leader".
   */
  @Test
  void aNodeWhoseRaftGroupStoppedSaysSoInsteadOfAnsweringMembers() throws Exception {
    String follower = cluster.leader().equals("n3") ? "n2" : "n3";
    String other =
        List.of("n1", "n2", "n3").stream()
            .filter(n -> !n.equals(follower))
            .findFirst()
            .orElseThrow();
    cluster.node(follower).server().getDivision(cluster.group().getGroupId()).close();

    assertThatThrownBy(
            () ->
                ClusterGrpc.newBlockingStub(channel(follower))
                    .listMembers(ListMembersRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
              assertThat(e.getStatus().getDescription())
                  .contains("node " + follower)
                  .contains("Raft group is CLOSED");
            });
    StatusResponse status =
        ClusterGrpc.newBlockingStub(channel(other)).status(StatusRequest.getDefaultInstance());
    NodeStatus closed =
        status.getNodesList().stream()
            .filter(n -> n.getMember().getId().equals(follower))
            .findFirst()
            .orElseThrow();
    assertThat(closed.getReachable()).isFalse();
    assertThat(closed.getError()).contains("Raft group is CLOSED");
    HttpResponse<String> ready =
        get(HttpClient.newHttpClient(), cluster.node(follower).httpPort(), "/ready");
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(ready.body()).contains("Raft group CLOSED");
    // The other two still serve.
    assertThat(
            ClusterGrpc.newBlockingStub(channel(other))
                .listMembers(ListMembersRequest.getDefaultInstance())
                .getLeaderId())
        .isNotEmpty();
  }

  /**
   * A removal computed from a view of the members that is no longer the leader's is refused and
   * changes nothing. Found by the nemesis: a node that had not yet seen n2 added back computed
   * "members minus n1" as {n3}, and the unconditional change removed n1 and n2 at once.
   */
  @Test
  void aRemovalFromAStaleViewOfTheMembersIsRefused() throws Exception {
    List<RaftPeer> all = new ArrayList<>(cluster.group().getPeers());
    List<RaftPeer> stale = all.stream().filter(p -> !p.getId().toString().equals("n2")).toList();
    try (RaftClient raft = cluster.client()) {
      RaftClientReply r = raft.admin().setConfiguration(ClusterService.removal(stale, "n1"));
      assertThat(r.isSuccess()).as("removal from a stale view").isFalse();
      assertThat(r.getException()).isInstanceOf(SetConfigurationException.class);
    } catch (SetConfigurationException refused) {
      // the client may raise the refusal instead of returning it: refused either way
    }
    MembersResponse m =
        ClusterGrpc.newBlockingStub(channel(cluster.leader()))
            .listMembers(ListMembersRequest.getDefaultInstance());
    assertThat(m.getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
    // From the current view a removal goes through, and removes only its member.
    String leader = cluster.leader();
    String follower =
        List.of("n1", "n2", "n3").stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    MembersResponse after =
        ClusterGrpc.newBlockingStub(channel(leader))
            .removeMember(RemoveMemberRequest.newBuilder().setId(follower).build());
    assertThat(after.getMembersList())
        .extracting(Member::getId)
        .hasSize(2)
        .doesNotContain(follower);
  }

  /**
   * One membership change at a time, and a second one is refused at once: while the leader stages a
   * new member that cannot catch up (n4 is never started; staged through Ratis directly, since the
   * API refuses to stage a node that does not answer), a removal fails with FAILED_PRECONDITION
   * instead of being retried inside the node until the staging ends. The staging then fails (no
   * progress for three times the longest election timeout, 6 s here) and the members are as before.
   */
  @Test
  void aChangeWhileAnotherIsStagedIsRefusedAtOnce() throws Exception {
    NodeConfig.Peer p4 = cluster.newPeer("n4");
    String leader = cluster.leader();
    RaftProperties once = new RaftProperties(cluster.properties());
    RaftClientConfigKeys.Rpc.setRequestTimeout(once, TimeDuration.valueOf(30, TimeUnit.SECONDS));
    var add =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try (RaftClient raft =
                  RaftClient.newBuilder()
                      .setProperties(once)
                      .setRaftGroup(cluster.group())
                      .setLeaderId(RaftPeerId.valueOf(leader))
                      .setRetryPolicy(RetryPolicies.noRetry())
                      .build()) {
                return raft.admin()
                    .setConfiguration(
                        SetConfigurationRequest.Arguments.newBuilder()
                            .setServersInNewConf(
                                List.of(
                                    RaftPeer.newBuilder()
                                        .setId("n4")
                                        .setAddress(p4.raftAddress())
                                        .setDataStreamAddress(p4.apiAddress())
                                        .build()))
                            .setMode(SetConfigurationRequest.Mode.ADD)
                            .build());
              } catch (java.io.IOException e) {
                return e;
              }
            });
    // Staged once the leader has a sender for n4 next to those for its two followers.
    var leaderInfo =
        cluster.node(leader).server().getDivision(cluster.group().getGroupId()).getInfo();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (leaderInfo.getFollowerNextIndices().length < 3 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(leaderInfo.getFollowerNextIndices()).as("the leader's senders").hasSize(3);
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                ClusterGrpc.newBlockingStub(channel("n3"))
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .removeMember(RemoveMemberRequest.newBuilder().setId("n1").build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription())
                  .contains("removing n1")
                  .contains("another membership change is in progress");
            });
    assertThat(add).as("the add, still staged when the removal was refused").isNotDone();
    // Before, the removal waited out the staging (about 6 s); 3 s leaves room for a busy machine.
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000);

    assertThat(add.get(30, TimeUnit.SECONDS))
        .as("the staging of n4")
        .isInstanceOf(ReconfigurationTimeoutException.class);
    assertThat(
            ClusterGrpc.newBlockingStub(channel(cluster.leader()))
                .listMembers(ListMembersRequest.getDefaultInstance())
                .getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
  }

  /**
   * A node that does not answer is not staged (Ratis would keep staging it for as long as writes go
   * on, refusing every other change): the add is refused at once, naming the address; once the node
   * runs, started to join, the same add goes through.
   */
  @Test
  void aNodeThatDoesNotAnswerIsNotStaged() throws Exception {
    NodeConfig.Peer p4 = cluster.newPeer("n4");
    ClusterGrpc.ClusterBlockingStub admin = ClusterGrpc.newBlockingStub(channel("n2"));
    AddMemberRequest add4 = addRequest("n4", p4);
    long start = System.nanoTime();
    assertThatThrownBy(() -> admin.withDeadlineAfter(10, TimeUnit.SECONDS).addMember(add4))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription())
                  .contains("adding n4 refused")
                  .contains(
                      "no node of this cluster answered at its Raft address " + p4.raftAddress());
            });
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
    // Another node's address given for n4: refused, naming the node that answered.
    String n3Raft = cluster.peer("n3").raftAddress();
    assertThatThrownBy(
            () ->
                admin
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .addMember(
                        AddMemberRequest.newBuilder()
                            .setMember(
                                Member.newBuilder()
                                    .setId("n4")
                                    .setRaftAddress(n3Raft)
                                    .setApiAddress(p4.apiAddress()))
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getDescription()).contains("is n3, not n4"));
    // An address that is not HOST:PORT: refused as such, before anything is asked.
    assertThatThrownBy(
            () ->
                admin
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .addMember(
                        AddMemberRequest.newBuilder()
                            .setMember(
                                Member.newBuilder()
                                    .setId("n4")
                                    .setRaftAddress("n4-no-port")
                                    .setApiAddress(p4.apiAddress()))
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("raft_address \"n4-no-port\"");
            });
    assertThat(admin.listMembers(ListMembersRequest.getDefaultInstance()).getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
  }

  /**
   * A member added before the cluster's first write joins: the leader asks a new member to install
   * a snapshot even when its log is whole, and its checkpoint then holds nothing. The follower
   * answered "install in progress" for good, and the add never committed.
   */
  @Test
  void aMemberAddedBeforeAnyWriteJoins() throws Exception {
    addJoiningN4();
    KVGrpc.newBlockingStub(channel("n1"))
        .put(PutRequest.newBuilder().setKey(s("first")).setValue(s("v")).build());
    // n4's own state (a stale read answers from it), once it has applied the write.
    KVGrpc.KVBlockingStub n4 = KVGrpc.newBlockingStub(channel("n4"));
    GetRequest stale =
        GetRequest.newBuilder().setKey(s("first")).setConsistency(Consistency.STALE).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!n4.get(stale).getValue().equals(s("v")) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(n4.get(stale).getValue()).isEqualTo(s("v"));
    assertThat(
            cluster
                .node("n4")
                .registry()
                .find("shale.snapshot.fetches")
                .tag("outcome", "nothing_to_install")
                .counter())
        .isNotNull();
  }

  /**
   * Ratis's client raises refusals, and after more than one attempt wraps the last cause in a
   * RaftRetryFailureException: each is found either way.
   */
  @Test
  void refusalsAreFoundThroughTheCauseChain() {
    java.time.Duration admin = java.time.Duration.ofSeconds(30);
    assertThat(
            StatusMapper.membershipRefusal(
                    "removing n1",
                    new SetConfigurationException("current configuration is different"),
                    admin)
                .getCode())
        .isEqualTo(Status.Code.ABORTED);
    assertThat(
            StatusMapper.membershipRefusal(
                    "adding n4",
                    new RaftRetryFailureException(
                        null,
                        3,
                        RetryPolicies.noRetry(),
                        new ReconfigurationInProgressException("already in progress")),
                    admin)
                .getCode())
        .isEqualTo(Status.Code.FAILED_PRECONDITION);
    Status noProgress =
        StatusMapper.membershipRefusal(
            "adding n4", new ReconfigurationTimeoutException("NOPROGRESS"), admin);
    assertThat(noProgress.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(noProgress.getDescription()).contains("made no progress");
    assertThat(
            StatusMapper.membershipRefusal(
                    "adding n4",
                    new RaftRetryFailureException(
                        null,
                        2,
                        RetryPolicies.noRetry(),
                        new TimeoutIOException("no reply in 30 s")),
                    admin)
                .getCode())
        .isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    Status other =
        StatusMapper.membershipRefusal("adding n4", new java.io.IOException("closed"), admin);
    assertThat(other.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(other.getDescription()).startsWith("adding n4 failed: ").contains("closed");
  }
}
