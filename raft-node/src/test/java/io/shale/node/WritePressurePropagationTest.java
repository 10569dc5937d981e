package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.engine.EngineOptions;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.pressure.WritePressure;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.node.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One follower's engine stops (its compactions paused until level 0 reaches the stop trigger): the
 * leader refuses writes with RESOURCE_EXHAUSTED naming that follower, and the refused write has no
 * effect; once the follower compacts again, writes are accepted.
 */
class WritePressurePropagationTest {
  @TempDir Path dir;

  /**
   * A commit needs a quorum: one STOPPED follower only delays writes (bounded, counted in {@code
   * shale.writes.delayed}); when a second follower stops too, no quorum can take writes and they
   * are refused naming a stopped node; once both recover, writes are accepted again.
   */
  @Test
  void oneStoppedFollowerDelaysWritesAndAStoppedQuorumRefusesThem() throws Exception {
    CompactionOptions c = EngineOptions.defaults().compaction();
    EngineOptions small =
        EngineOptions.defaults()
            .withMemtableSize(64 << 10)
            .withCompaction(
                new CompactionOptions(
                    2,
                    c.levelMultiplier(),
                    c.maxBytesForLevelBase(),
                    c.levelBaseFollowsFlushes(),
                    c.targetFileSizeBytes(),
                    c.numLevels(),
                    c.threads(),
                    c.score()))
            .withWritePressure(
                new WritePressureOptions(
                    true,
                    3,
                    5,
                    64L << 30,
                    256L << 30,
                    4,
                    Duration.ofMillis(20),
                    WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE));
    ;
    try (LocalCluster cluster = new LocalCluster(dir, 3, small)) {
      String leader = cluster.leader();
      List<String> followers = cluster.running().stream().filter(n -> !n.equals(leader)).toList();
      String first = followers.get(0);
      String second = followers.get(1);
      cluster.node(first).stateMachine().engine().pauseCompactions();
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", cluster.node(leader).apiPort())
              .usePlaintext()
              .build();
      try {
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        ByteString value = ByteString.copyFrom(new byte[2048]);
        int i = 0;
        while (cluster.node(first).stateMachine().engine().writePressure().condition()
            != WritePressure.Condition.STOPPED) {
          assertThat(i).as("the first follower STOPPED within 3000 writes").isLessThan(3000);
          put(kv, "k" + i++, value);
        }
        // One follower STOPPED, a quorum able: every write still goes through, delayed.
        for (int j = 0; j < 100; j++) {
          put(kv, "k" + i++, value);
        }
        assertThat(
                cluster
                    .node(leader)
                    .registry()
                    .counter("shale.writes.delayed", "node", leader)
                    .count())
            .isGreaterThan(0);

        cluster.node(second).stateMachine().engine().pauseCompactions();
        StatusRuntimeException refused = null;
        String refusedKey = null;
        for (int j = 0; j < 3000 && refused == null; j++) {
          String key = "k" + i++;
          try {
            put(kv, key, value);
          } catch (StatusRuntimeException e) {
            refused = e;
            refusedKey = key;
          }
        }
        assertThat(refused).as("no write was refused in 3000").isNotNull();
        assertThat(refused.getStatus().getCode())
            .as(refused.getStatus().getDescription())
            .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.getStatus().getDescription())
            .containsAnyOf("node " + first, "node " + second)
            .contains("L0_FILES")
            .contains("threshold 5")
            .contains("retry after");
        // The refused write never entered the log.
        assertThat(
                kv.get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(refusedKey)).build())
                    .getFound())
            .isFalse();

        cluster.node(first).stateMachine().engine().resumeCompactions();
        cluster.node(second).stateMachine().engine().resumeCompactions();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean accepted = false;
        while (!accepted && System.nanoTime() < deadline) {
          try {
            put(kv, "after", value);
            accepted = true;
          } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            Thread.sleep(100);
          }
        }
        assertThat(accepted)
            .as("writes accepted again within 30 s of the followers recovering")
            .isTrue();
      } finally {
        ch.shutdownNow();
      }
    }
  }

  private static void put(KVGrpc.KVBlockingStub kv, String key, ByteString value) {
    kv.withDeadlineAfter(20, TimeUnit.SECONDS)
        .put(PutRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).setValue(value).build());
  }
}
