package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.ShaleClient;
import io.shale.engine.EngineOptions;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Followers hear of each commit from the leader at once, not at its next heartbeat: with a 4 s
 * election timeout Ratis's heartbeats come every 2 s, so a follower left to learn of a sparse
 * write's commit from them would apply it about 2 s after the write was acknowledged.
 */
class PromptCommitAppenderTest {
  @TempDir Path dir;

  @Test
  void followersApplyASparseWriteLongBeforeTheNextHeartbeat() throws Exception {
    NodeConfig.RaftSettings slowHeartbeats =
        new NodeConfig.RaftSettings(
            Duration.ofSeconds(4),
            100_000,
            8 << 20,
            1024,
            4096,
            32L << 20,
            Duration.ofSeconds(2),
            Duration.ofMillis(250));
    try (LocalCluster cluster = new LocalCluster(dir, 3, EngineOptions.defaults(), slowHeartbeats);
        ShaleClient client =
            ShaleClient.builder()
                .endpoints(cluster.apiEndpoints().toArray(String[]::new))
                .deadline(Duration.ofSeconds(30))
                .build()) {
      String leader = cluster.leader();
      List<String> followers = cluster.running().stream().filter(id -> !id.equals(leader)).toList();
      client.put("warm", "up");
      List<Long> lagsMillis = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        // Acknowledged once the leader has applied it; no other write follows.
        client.put("k" + i, "v" + i);
        long acknowledged = System.nanoTime();
        long index = applied(cluster.node(leader));
        long deadline = acknowledged + TimeUnit.SECONDS.toNanos(10);
        while (followers.stream().anyMatch(f -> applied(cluster.node(f)) < index)
            && System.nanoTime() < deadline) {
          TimeUnit.MILLISECONDS.sleep(1);
        }
        lagsMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acknowledged));
      }
      LoggerFactory.getLogger(PromptCommitAppenderTest.class)
          .info("ms from acknowledgement to both followers applying: {}", lagsMillis);
      List<Long> sorted = lagsMillis.stream().sorted().toList();
      assertThat(sorted.get(sorted.size() / 2))
          .as(
              "median ms from a write's acknowledgement to both followers applying it: %s",
              lagsMillis)
          .isLessThan(300);
      assertThat(sorted.get(sorted.size() - 1)).as("slowest, ms: %s", lagsMillis).isLessThan(2000);
    }
  }

  private static long applied(ShaleNode node) {
    try {
      return node.server().getDivision(node.group().getGroupId()).getInfo().getLastAppliedIndex();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
