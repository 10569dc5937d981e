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
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.thirdparty.com.codahale.metrics.Counter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Followers hear of each commit from the leader at once, not at its next heartbeat: with a 4 s
 * election timeout Ratis's heartbeats come every 2 s, so a follower left to learn of a sparse
 * write's commit from them would apply it about 2 s after the write was acknowledged. The updates
 * are bounded: one per write and follower at most.
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
      long heartbeatsBefore = heartbeatsSentBy(leader);
      long started = System.nanoTime();
      int writes = 7;
      for (int i = 0; i < writes; i++) {
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
      long heartbeats = heartbeatsSentBy(leader) - heartbeatsBefore;
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + 1;
      // One commit update per write and follower at most, besides Ratis's periodic heartbeats (at
      // most one a second per follower with a 4 s timeout): never a stream of them.
      assertThat(heartbeats)
          .as("empty appends the leader sent during %d writes in %d s", writes, seconds)
          .isBetween((long) writes, 2L * writes + 2 * (seconds + 1));
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

  /** Empty appends (heartbeats) node {@code id} has sent as leader, from Ratis's own counter. */
  private static long heartbeatsSentBy(String id) {
    long sent = 0;
    for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
      MetricRegistryInfo info = r.getMetricRegistryInfo();
      if (!(r instanceof RatisMetricRegistryImpl impl)
          || !"ratis_grpc".equals(info.getApplicationName())
          || !"log_appender".equals(info.getMetricsComponentName())
          || !info.getPrefix().startsWith(id + "@")) {
        continue;
      }
      for (var e : impl.getDropWizardMetricRegistry().getMetrics().entrySet()) {
        if (e.getKey().endsWith(".num_requests_heartbeat") && e.getValue() instanceof Counter c) {
          sent += c.getCount();
        }
      }
    }
    return sent;
  }

  private static long applied(ShaleNode node) {
    try {
      return node.server().getDivision(node.group().getGroupId()).getInfo().getLastAppliedIndex();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
