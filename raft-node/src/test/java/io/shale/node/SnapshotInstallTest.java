package io.shale.node;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.shale.client.proto.AuthGrpc;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.PutResponse;
import io.shale.client.proto.RoleAddRequest;
import io.shale.client.proto.SnapshotRequest;
import io.shale.client.proto.TransferLeadershipRequest;
import io.shale.client.proto.UserAddRequest;
import io.shale.client.proto.UserRoleRequest;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.config.EngineConfig;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import io.shale.node.snapshot.SnapshotFetcher;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower stopped while the leader writes, snapshots and purges its log past the follower's last
 * entry: on restart it cannot catch up from the log, so it fetches the leader's checkpoint, swaps
 * it in, and converges. A second round shows that files it already holds are not fetched again.
 */
class SnapshotInstallTest {
  @TempDir Path dir;

  /**
   * Snapshots every 100 entries, small log segments so that purges happen quickly, and purges up to
   * the snapshot.
   */
  static final NodeConfig.RaftSettings RAFT =
      new NodeConfig.RaftSettings(
              Duration.ofMillis(300),
              100,
              32 << 10,
              20,
              4096,
              64L << 20,
              Duration.ofSeconds(2),
              Duration.ofMillis(250))
          .withLogKeepEntries(0);

  /** No automatic compaction, so level-0 files survive between the two rounds. */
  static final EngineOptions ENGINE =
      EngineConfig.parse(
          """
      [lsm.compaction]
      level0_file_num_compaction_trigger = 1000
      [lsm.write_pressure]
      enabled = false
      """);

  private static byte[] value(int i, int round) {
    // Every fifth value is above the blob threshold, so blob files are transferred too.
    byte[] v = new byte[i % 5 == 0 ? 10_000 : 100];
    Arrays.fill(v, (byte) (i * 31 + round));
    return v;
  }

  private static ByteString key(int i) {
    return ByteString.copyFrom(String.format("key%05d", i), StandardCharsets.UTF_8);
  }

  @Test
  void aFollowerBehindThePurgedLogInstallsTheLeadersCheckpoint() throws Exception {
    // Mutual TLS: the checkpoint travels on the Raft port, the peer listener.
    try (LocalCluster cluster = LocalCluster.withPeerTls(dir, 3, ENGINE, RAFT)) {
      String leader = cluster.leader();
      String follower = aFollower(cluster, leader);
      try (ApiChannels channels = new ApiChannels()) {
        ManagedChannel ch = channels.to(cluster, leader);
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        // Users and roles are replicated state: made while the follower is down, they reach it
        // in the checkpoint.
        AuthGrpc.AuthBlockingStub auth = AuthGrpc.newBlockingStub(ch);
        SnapshotFetcher.Result first =
            round(
                cluster,
                kv,
                ch,
                leader,
                follower,
                1,
                () -> {
                  auth.roleAdd(RoleAddRequest.newBuilder().setName("reader").build());
                  auth.userAdd(UserAddRequest.newBuilder().setName("dave").build());
                  auth.userGrantRole(
                      UserRoleRequest.newBuilder().setName("dave").setRole("reader").build());
                });
        assertThat(first.filesFetched()).isGreaterThan(0);
        assertThat(cluster.node(follower).stateMachine().authState().user("dave").getRolesList())
            .containsExactly("reader");
        SnapshotFetcher.Result second = round(cluster, kv, ch, leader, follower, 2);
        // The first round's tables and blob files are still the leader's (no compaction ran):
        // the follower holds them under the same names and checksums, and does not fetch them.
        assertThat(second.filesReused()).as("files reused in the second install").isGreaterThan(0);
        assertThat(second.bytesReused()).isGreaterThan(0);
      }
    }
  }

  /**
   * A purge keeps the last {@code raft.log_keep_entries} entries: a follower stopped for fewer
   * entries than that while the leader snapshots (every 100 entries here) catches up from the log,
   * with no install. With nothing kept it would install (the test above); a node joining under load
   * and lagging a few hundred entries at each snapshot never caught up that way.
   */
  @Test
  void aFollowerWithinTheKeptEntriesCatchesUpFromTheLog() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3, ENGINE, RAFT.withLogKeepEntries(1_000))) {
      String leader = cluster.leader();
      String follower = aFollower(cluster, leader);
      try (ApiChannels channels = new ApiChannels()) {
        ManagedChannel ch = channels.to(cluster, leader);
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        cluster.stop(follower);
        int n = 600;
        long snapshot = putThenSnapshot(kv, ch, n, 1);
        RaftServer.Division ld =
            cluster.node(leader).server().getDivision(cluster.group().getGroupId());
        long followerLast = persistedIndex(cluster, follower);
        assertThat(snapshot)
            .as("snapshots were taken past the follower")
            .isGreaterThan(followerLast);
        assertThat(ld.getRaftLog().getStartIndex())
            .as("the leader's log still holds the follower's next entry")
            .isLessThanOrEqualTo(followerLast + 1);
        long target = ld.getInfo().getLastAppliedIndex();
        ShaleNode restarted = cluster.start(follower);
        awaitApplied(cluster, restarted, target);
        assertThat(restarted.stateMachine().lastInstall()).as("no snapshot installed").isNull();
        for (int i = 0; i < n; i++) {
          assertThat(restarted.stateMachine().engine().get(key(i).toByteArray()))
              .as("key %d", i)
              .isEqualTo(value(i, 1));
        }
      }
    }
  }

  /** Puts {@code key(i) = value(i, round)} for i below {@code n}, then takes a snapshot. */
  private static long putThenSnapshot(
      KVGrpc.KVBlockingStub kv, ManagedChannel ch, int n, int round) {
    for (int i = 0; i < n; i++) {
      kv.put(
          PutRequest.newBuilder()
              .setKey(key(i))
              .setValue(ByteString.copyFrom(value(i, round)))
              .build());
    }
    return ClusterGrpc.newBlockingStub(ch)
        .snapshot(SnapshotRequest.getDefaultInstance())
        .getIndex();
  }

  /** The applied index a stopped node's engine holds on disk. */
  private static long persistedIndex(LocalCluster cluster, String id) throws Exception {
    try (Engine e = Engine.open(cluster.config(id).dataDir().resolve("engine"), ENGINE)) {
      return e.persistedAppliedIndex();
    }
  }

  /** Waits up to 60 s for {@code node} to apply {@code target}. */
  private static void awaitApplied(LocalCluster cluster, ShaleNode node, long target)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (node.server().getDivision(cluster.group().getGroupId()).getInfo().getLastAppliedIndex()
        < target) {
      assertThat(System.nanoTime()).as("follower caught up").isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static String aFollower(LocalCluster cluster, String leader) {
    return cluster.running().stream()
        .filter(n -> !n.equals(leader))
        .reduce((a, b) -> b)
        .orElseThrow();
  }

  private SnapshotFetcher.Result round(
      LocalCluster cluster,
      KVGrpc.KVBlockingStub kv,
      ManagedChannel ch,
      String leader,
      String follower,
      int round)
      throws Exception {
    return round(cluster, kv, ch, leader, follower, round, () -> {});
  }

  /** A round that runs {@code whileStopped} first, while the follower is down. */
  private SnapshotFetcher.Result round(
      LocalCluster cluster,
      KVGrpc.KVBlockingStub kv,
      ManagedChannel ch,
      String leader,
      String follower,
      int round,
      Runnable whileStopped)
      throws Exception {
    cluster.stop(follower);
    whileStopped.run();
    int n = 600;
    long snapshot = putThenSnapshot(kv, ch, n, round);
    RaftServer.Division ld =
        cluster.node(leader).server().getDivision(cluster.group().getGroupId());
    assertThat(snapshot).isGreaterThan(0);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    // Purging runs after the snapshot; wait until the log no longer holds the follower's entries.
    long followerLast = persistedIndex(cluster, follower);
    while (ld.getRaftLog().getStartIndex() <= followerLast + 1) {
      assertThat(System.nanoTime())
          .as("leader purged its log past the follower's entries")
          .isLessThan(deadline);
      Thread.sleep(50);
    }
    long target = ld.getInfo().getLastAppliedIndex();
    ShaleNode restarted = cluster.start(follower);
    awaitApplied(cluster, restarted, target);
    SnapshotFetcher.Result installed = restarted.stateMachine().lastInstall();
    assertThat(installed).as("round %d installed a snapshot", round).isNotNull();
    assertThat(installed.index()).isGreaterThan(followerLast);
    Engine e = restarted.stateMachine().engine();
    for (int i = 0; i < n; i++) {
      assertThat(e.get(key(i).toByteArray()))
          .as("key %d after round %d", i, round)
          .isEqualTo(value(i, round));
    }
    return installed;
  }

  /**
   * Request records travel in the checkpoint: writes made while a follower was down reach it only
   * by the install; once it leads, a retry of each (same request id) gets the first reply, and a
   * compare-and-set whose condition no longer holds is not applied again.
   */
  @Test
  void requestRecordsTravelWithTheCheckpoint() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3, ENGINE, RAFT)) {
      String leader = cluster.leader();
      String follower = aFollower(cluster, leader);
      try (ApiChannels channels = new ApiChannels()) {
        ManagedChannel ch = channels.to(cluster, leader);
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        PutRequest put =
            PutRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("rec/put"))
                .setValue(ByteString.copyFromUtf8("1"))
                .setRequestId(ByteString.copyFromUtf8("rec-put"))
                .build();
        CompareAndSetRequest cas =
            CompareAndSetRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("rec/cas"))
                .setExpectedAbsent(true)
                .setThen(
                    Op.newBuilder()
                        .setPut(
                            KeyValue.newBuilder()
                                .setKey(ByteString.copyFromUtf8("rec/cas"))
                                .setValue(ByteString.copyFromUtf8("first"))))
                .setRequestId(ByteString.copyFromUtf8("rec-cas"))
                .build();
        PutResponse[] firstPut = new PutResponse[1];
        CompareAndSetResponse[] firstCas = new CompareAndSetResponse[1];
        round(
            cluster,
            kv,
            ch,
            leader,
            follower,
            1,
            () -> {
              firstPut[0] = kv.put(put);
              firstCas[0] = kv.compareAndSet(cas);
            });
        assertThat(firstCas[0].getApplied()).isTrue();
        // The key changes after the CAS: applied again, the CAS would now fail.
        kv.put(
            PutRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("rec/cas"))
                .setValue(ByteString.copyFromUtf8("later"))
                .build());
        ClusterGrpc.newBlockingStub(ch)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .transferLeadership(TransferLeadershipRequest.newBuilder().setId(follower).build());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!cluster.leader().equals(follower)) {
          assertThat(System.nanoTime()).as("%s leads", follower).isLessThan(deadline);
          Thread.sleep(50);
        }
        KVGrpc.KVBlockingStub atFollower = KVGrpc.newBlockingStub(channels.to(cluster, follower));
        assertThat(atFollower.put(put).getHeader().getAppliedIndex())
            .isEqualTo(firstPut[0].getHeader().getAppliedIndex());
        CompareAndSetResponse again = atFollower.compareAndSet(cas);
        assertThat(again.getApplied()).isTrue();
        assertThat(again.getHeader().getAppliedIndex())
            .isEqualTo(firstCas[0].getHeader().getAppliedIndex());
        assertThat(cluster.node(follower).stateMachine().engine().get("rec/cas".getBytes(UTF_8)))
            .isEqualTo("later".getBytes(UTF_8));
      }
    }
  }

  /**
   * What Ratis is told is the latest snapshot must be the checkpoint it took (where it purges the
   * log), not the engine's persisted index, which every later flush moves on: a leader looks up the
   * term of the entry before a follower's next index there, and when that lookup missed it told a
   * follower that had just installed the checkpoint to install it again, for ever. A restarted node
   * reports the engine it opened.
   */
  @Test
  void theLatestSnapshotIsTheCheckpointNotTheLaterFlushes() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3, ENGINE, RAFT)) {
      String leader = cluster.leader();
      try (ApiChannels channels = new ApiChannels()) {
        ManagedChannel ch = channels.to(cluster, leader);
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        long snapshot = putThenSnapshot(kv, ch, 30, 1);
        assertThat(snapshot).isGreaterThan(0);
        for (int i = 0; i < 30; i++) {
          kv.put(
              PutRequest.newBuilder()
                  .setKey(key(i))
                  .setValue(ByteString.copyFrom(value(i, 2)))
                  .build());
        }
        Engine engine = cluster.node(leader).stateMachine().engine();
        engine.flush();
        assertThat(engine.persistedAppliedIndex()).isGreaterThan(snapshot);
        assertThat(
                cluster.node(leader).stateMachine().getLatestSnapshot().getTermIndex().getIndex())
            .isEqualTo(snapshot);
      }
      String other =
          cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
      cluster.stop(other);
      ShaleNode restarted = cluster.start(other);
      assertThat(restarted.stateMachine().getLatestSnapshot().getTermIndex().getIndex())
          .isEqualTo(restarted.stateMachine().engine().persistedAppliedIndex());
    }
  }
}
