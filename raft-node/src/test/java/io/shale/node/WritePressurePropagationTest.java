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
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.node.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
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

  @Test
  void aStoppedFollowerThrottlesTheLeaderUntilItRecovers() throws Exception {
    CompactionOptions c = EngineOptions.defaults().compaction();
    EngineOptions small =
        EngineOptions.defaults()
            .withMemtableSize(64 << 10)
            .withCompaction(
                new CompactionOptions(
                    2,
                    c.levelMultiplier(),
                    c.maxBytesForLevelBase(),
                    c.targetFileSizeBytes(),
                    c.numLevels(),
                    c.threads(),
                    c.score()))
            .withWritePressure(
                new WritePressureOptions(
                    true, 3, 5, 64L << 30, 256L << 30, 4, Duration.ofMillis(20)));
    try (LocalCluster cluster = new LocalCluster(dir, 3, small)) {
      String leader = cluster.leader();
      String follower =
          cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
      cluster.node(follower).stateMachine().engine().pauseCompactions();
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", cluster.node(leader).apiPort())
              .usePlaintext()
              .build();
      try {
        KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
        ByteString value = ByteString.copyFrom(new byte[2048]);
        StatusRuntimeException refused = null;
        String refusedKey = null;
        for (int i = 0; i < 3000 && refused == null; i++) {
          String key = "k" + i;
          try {
            kv.withDeadlineAfter(20, TimeUnit.SECONDS)
                .put(
                    PutRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8(key))
                        .setValue(value)
                        .build());
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
            .contains("node " + follower)
            .contains("L0_FILES")
            .contains("threshold 5")
            .contains("retry after");
        assertThat(cluster.node(follower).stateMachine().engine().stats().levels().get(0).files())
            .isGreaterThanOrEqualTo(5);
        // The refused write never entered the log.
        assertThat(
                kv.get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(refusedKey)).build())
                    .getFound())
            .isFalse();

        cluster.node(follower).stateMachine().engine().resumeCompactions();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean accepted = false;
        while (!accepted && System.nanoTime() < deadline) {
          try {
            kv.withDeadlineAfter(20, TimeUnit.SECONDS)
                .put(
                    PutRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8("after"))
                        .setValue(value)
                        .build());
            accepted = true;
          } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            Thread.sleep(100);
          }
        }
        assertThat(accepted)
            .as("writes accepted again within 30 s of the follower recovering")
            .isTrue();
      } finally {
        ch.shutdownNow();
      }
    }
  }
}
