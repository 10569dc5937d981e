package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.engine.EngineOptions;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import io.shale.node.transport.NodeChannels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Raft log stays within {@code raft.snapshot_every_bytes} on every node although the entry
 * count never reaches {@code snapshot_every_entries}: snapshots are taken for size, Ratis purges
 * the log up to them, and a restarted node opens on them with every write.
 */
class LogSizeSnapshotsTest {
  @TempDir Path dir;

  private static final long LIMIT = 2L << 20;

  /** Entries every purge keeps: 1 MiB of this test's values, which the size bound leaves alone. */
  private static final long KEEP = 16;

  private static final int VALUE_BYTES = 64 << 10;

  /** Entry-count snapshots out of reach; 2 MiB of purgeable log at most; 256 KiB segments. */
  private static final NodeConfig.RaftSettings RAFT = settings(LIMIT);

  private static NodeConfig.RaftSettings settings(long snapshotEveryBytes) {
    NodeConfig.RaftSettings d = NodeConfig.RaftSettings.defaults();
    return new NodeConfig.RaftSettings(
        d.electionTimeout(),
        1_000_000,
        256 << 10,
        16,
        d.pendingWriteLimit(),
        d.pendingWriteBytes(),
        d.pressureReportMaxAge(),
        d.pressurePollInterval(),
        d.adminTimeout(),
        d.groupCommitThreads(),
        d.groupCommitMaxWrites(),
        d.groupCommitMaxBytes(),
        d.snapshotReloadWait(),
        d.snapshotInstallSettle(),
        d.checkpointLease(),
        d.pressureMaxDelay(),
        d.followerRetryMaxWait(),
        snapshotEveryBytes,
        d.followerReads(),
        d.leaseReads(),
        KEEP,
        d.replicationBatchWait(),
        d.commitUpdateDelay());
  }

  @Test
  void theLogIsSnapshottedAndPurgedBySizeOnEveryNode() throws Exception {
    byte[] value = new byte[VALUE_BYTES];
    int puts = 160; // 10 MiB of values: five times the limit
    try (LocalCluster cluster = new LocalCluster(dir, 3, EngineOptions.defaults(), RAFT)) {
      String leader = cluster.leader();
      ManagedChannel ch = NodeChannels.open(cluster.peer(leader).apiAddress());
      try {
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        for (int i = 0; i < puts; i++) {
          Arrays.fill(value, (byte) i);
          kv.withDeadlineAfter(30, TimeUnit.SECONDS)
              .put(
                  PutRequest.newBuilder()
                      .setKey(ByteString.copyFromUtf8("k" + i))
                      .setValue(ByteString.copyFrom(value))
                      .build());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (String id : cluster.running()) {
          RaftServer.Division d =
              cluster.node(id).server().getDivision(cluster.group().getGroupId());
          Path logDir = d.getRaftStorage().getStorageDir().getCurrentDir().toPath();
          while (d.getRaftLog().getStartIndex() <= 0
              || LogSizeSnapshots.logBytes(logDir) > 2 * LIMIT + KEEP * VALUE_BYTES) {
            assertThat(System.nanoTime())
                .as(
                    "%s: log start %d, %d bytes of log",
                    id, d.getRaftLog().getStartIndex(), LogSizeSnapshots.logBytes(logDir))
                .isLessThan(deadline);
            Thread.sleep(100);
          }
          assertThat(cluster.node(id).stateMachine().getLatestSnapshot().getIndex()).isPositive();
        }
        // A node restarted on its purged log and its snapshot holds every write.
        String other =
            cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
        cluster.stop(other);
        ShaleNode restarted = cluster.start(other);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (int i = 0; i < puts; i++) {
          Arrays.fill(value, (byte) i);
          byte[] got;
          while ((got =
                  restarted.stateMachine().engine().get(("k" + i).getBytes(StandardCharsets.UTF_8)))
              == null) {
            assertThat(System.nanoTime()).as("k%d on the restarted node", i).isLessThan(end);
            Thread.sleep(50);
          }
          assertThat(got).isEqualTo(value);
        }
        assertThat(kv.get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8("k0")).build()))
            .matches(r -> r.getFound());
      } finally {
        ch.shutdownNow();
      }
    }
  }

  @Test
  void aSnapshotThatStoppedShortOfTheAppliedIndexIsAskedForAgainThoughNothingNewIsApplied() {
    LogSizeSnapshots.AskRule rule = new LogSizeSnapshots.AskRule(LIMIT, 16);
    assertThat(rule.due(LIMIT, 100)).as("at the bound, not over it").isFalse();
    assertThat(rule.due(LIMIT + 1, 100)).isTrue();
    // The engine had flushed up to 60 when asked at 100: the snapshot stops there.
    rule.asked(100, 60);
    assertThat(rule.due(LIMIT + 1, 100)).as("40 entries left behind, over the gap").isTrue();
    rule.asked(100, 100);
    assertThat(rule.due(LIMIT + 1, 100)).as("idle, and the last snapshot covers it").isFalse();
    assertThat(rule.due(LIMIT + 1, 101)).as("something new applied").isTrue();
    rule.asked(101, 90);
    assertThat(rule.due(LIMIT + 1, 101)).as("11 entries behind: under the purge gap").isFalse();
    rule.asked(105, -1); // a request that failed
    assertThat(rule.due(LIMIT + 1, 110)).isTrue();
  }

  @Test
  void onlyClosedSegmentsEndingAtOrBeforeTheIndexArePurgeable() throws Exception {
    Path logDir = dir.resolve("current");
    java.nio.file.Files.createDirectories(logDir);
    java.nio.file.Files.write(logDir.resolve("log_1-10"), new byte[100]);
    java.nio.file.Files.write(logDir.resolve("log_11-20"), new byte[200]);
    java.nio.file.Files.write(logDir.resolve("log_inprogress_21"), new byte[50]);
    java.nio.file.Files.write(logDir.resolve("raft-meta"), new byte[7]);
    assertThat(LogSizeSnapshots.purgeableBytes(logDir, 9)).isZero();
    assertThat(LogSizeSnapshots.purgeableBytes(logDir, 15)).isEqualTo(100);
    assertThat(LogSizeSnapshots.purgeableBytes(logDir, 20)).isEqualTo(300);
    assertThat(LogSizeSnapshots.purgeableBytes(logDir, Long.MAX_VALUE - 1)).isEqualTo(300);
    assertThat(LogSizeSnapshots.logBytes(logDir)).isEqualTo(350);
  }
}
