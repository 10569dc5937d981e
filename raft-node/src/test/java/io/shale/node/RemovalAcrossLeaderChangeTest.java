package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.shale.client.proto.AddMemberRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.Member;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.PutRequest;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader elected while a removal is half done: the log's last configuration is still the
 * transitional one (old and new members), and the removed peer's log sender must not outlive it.
 *
 * <p>Nemesis run 447 (3 nodes, MIXED, 2026-12-01): n3, the leader, was removed; n2 was elected
 * before the final configuration reached it, completed the change, and kept sending its log to n3
 * for the rest of its term. Every add of n3 then failed inside Ratis ("Found duplicated element
 * n3"), and the empty n3 started to join took those appends, timed out, and shut itself down. Here
 * the same start is made on purpose: the followers hold back the final configuration (a Ratis code
 * injection on their append handler) until the leader is stopped.
 */
class RemovalAcrossLeaderChangeTest {
  /** Ratis's injection point at the start of a follower's append handler. */
  private static final String APPEND_ENTRIES = "RaftServerImpl.appendEntries";

  @TempDir Path dir;

  private LocalCluster cluster;
  private final ApiChannels channels = new ApiChannels();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    CodeInjectionForTesting.remove(APPEND_ENTRIES);
    channels.close();
    if (cluster != null) {
      cluster.close();
    }
  }

  private ManagedChannel channel(String node) {
    return channels.to(cluster, node);
  }

  private static ByteString s(String v) {
    return ByteString.copyFrom(v, StandardCharsets.UTF_8);
  }

  /** Whether {@code r} carries a stable configuration (no old members) without {@code removed}. */
  private static boolean carriesFinalConfWithout(AppendEntriesRequestProto r, String removed) {
    for (LogEntryProto e : r.getEntriesList()) {
      if (e.hasConfigurationEntry()
          && e.getConfigurationEntry().getOldPeersCount() == 0
          && e.getConfigurationEntry().getPeersList().stream()
              .noneMatch(p -> p.getId().toStringUtf8().equals(removed))) {
        return true;
      }
    }
    return false;
  }

  /** The peers leader {@code id} sends its log to; empty if it does not lead. */
  private Set<String> sendersOf(String id) {
    RaftServer.Division d = division(id);
    return d.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList().stream()
        .map(f -> f.getId().getId().toStringUtf8())
        .collect(Collectors.toSet());
  }

  private RaftServer.Division division(String id) {
    try {
      return cluster.node(id).server().getDivision(cluster.group().getGroupId());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aLeaderElectedMidRemovalDropsTheRemovedPeerWhichCanThenBeAddedBack() throws Exception {
    cluster = new LocalCluster(dir, 3);
    String removed = cluster.leader();
    List<String> stay = Stream.of("n1", "n2", "n3").filter(n -> !n.equals(removed)).toList();
    KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(channel(stay.get(0)));
    for (int i = 0; i < 50; i++) {
      kv.put(PutRequest.newBuilder().setKey(s("k" + i)).setValue(s("v" + i)).build());
    }

    // The followers take the transitional configuration but hold the final one back.
    Set<String> holding = ConcurrentHashMap.newKeySet();
    CodeInjectionForTesting.put(
        APPEND_ENTRIES,
        (local, leader, args) -> {
          if (removed.equals(String.valueOf(leader))
              && args.length > 1
              && args[1] instanceof AppendEntriesRequestProto r
              && carriesFinalConfWithout(r, removed)) {
            holding.add(String.valueOf(local));
            try {
              release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return true;
        });
    RaftProperties once = new RaftProperties(cluster.properties());
    RaftClientConfigKeys.Rpc.setRequestTimeout(once, TimeDuration.valueOf(30, TimeUnit.SECONDS));
    List<RaftPeer> remaining =
        cluster.group().getPeers().stream()
            .filter(p -> !p.getId().toString().equals(removed))
            .toList();
    CompletableFuture<Object> removal =
        CompletableFuture.supplyAsync(
            () -> {
              try (RaftClient raft =
                  RaftClient.newBuilder()
                      .setProperties(once)
                      .setRaftGroup(cluster.group())
                      .setLeaderId(RaftPeerId.valueOf(removed))
                      .setRetryPolicy(RetryPolicies.noRetry())
                      .build()) {
                return raft.admin()
                    .setConfiguration(
                        SetConfigurationRequest.Arguments.newBuilder()
                            .setServersInNewConf(remaining)
                            .build());
              } catch (IOException e) {
                return e;
              }
            });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (holding.size() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(holding)
        .as("followers holding back the final configuration")
        .containsExactlyInAnyOrderElementsOf(stay);
    cluster.stop(removed);
    removal.get(40, TimeUnit.SECONDS);

    // One of the two is elected with the transitional configuration as its last.
    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    String next = null;
    while (next == null && System.nanoTime() < deadline) {
      next = stay.stream().filter(n -> division(n).getInfo().isLeader()).findFirst().orElse(null);
      Thread.sleep(5);
    }
    assertThat(next).as("a leader among " + stay).isNotNull();
    release.countDown();
    CodeInjectionForTesting.remove(APPEND_ENTRIES);

    // Within a few election timeouts no leader sends to the removed peer any more.
    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    Set<String> senders = Set.of(removed);
    while (System.nanoTime() < deadline) {
      String leader =
          stay.stream().filter(n -> division(n).getInfo().isLeader()).findFirst().orElse(null);
      senders = leader == null ? Set.of(removed) : sendersOf(leader);
      if (leader != null
          && !senders.contains(removed)
          && division(leader).getRaftConf().getPreviousPeers().isEmpty()) {
        break;
      }
      Thread.sleep(20);
    }
    assertThat(senders).as("the peers the leader sends its log to").doesNotContain(removed);

    // The removed id, started again empty, joins: the add succeeds and it gets the data.
    try (Stream<Path> files = Files.walk(dir.resolve(removed))) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    NodeConfig.Peer again = cluster.peer(removed);
    cluster.startJoining(removed);
    String leader = cluster.leader();
    MembersResponse added =
        ClusterGrpc.newBlockingStub(channel(leader))
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .addMember(
                AddMemberRequest.newBuilder()
                    .setMember(
                        Member.newBuilder()
                            .setId(removed)
                            .setRaftAddress(again.raftAddress())
                            .setApiAddress(again.apiAddress()))
                    .build());
    assertThat(added.getMembersList())
        .extracting(Member::getId)
        .containsExactlyInAnyOrder("n1", "n2", "n3");
    KVGrpc.KVBlockingStub back = KVGrpc.newBlockingStub(channel(removed));
    GetRequest stale =
        GetRequest.newBuilder().setKey(s("k49")).setConsistency(Consistency.STALE).build();
    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!back.get(stale).getValue().equals(s("v49")) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(back.get(stale).getValue())
        .as("the last write, read from the re-added node")
        .isEqualTo(s("v49"));
    RaftGroupId gid = cluster.group().getGroupId();
    assertThat(cluster.node(removed).server().getDivision(gid).getInfo().isAlive())
        .as("the re-added node's division")
        .isTrue();
  }
}
