package io.shale.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.client.ShaleClient;
import io.shale.client.ThrottlePolicy;
import io.shale.client.WriteThrottledException;
import io.shale.engine.EngineOptions;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.pressure.WritePressureOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower whose compactions are paused fills L0 up to the stop trigger (5 files here); the
 * leader then refuses writes, and the SDK retries them per its ThrottlePolicy before throwing a
 * WriteThrottledException that names the follower and the cause.
 */
class WriteThrottlingTest {
  private static final CompactionOptions C = EngineOptions.defaults().compaction();

  @RegisterExtension
  static final ShaleCluster cluster =
      ShaleCluster.builder()
          .nodes(3)
          .engineOptions(
              EngineOptions.defaults()
                  .withMemtableSize(64 << 10)
                  .withCompaction(
                      new CompactionOptions(
                          2,
                          C.levelMultiplier(),
                          C.maxBytesForLevelBase(),
                          C.levelBaseFollowsFlushes(),
                          C.targetFileSizeBytes(),
                          C.numLevels(),
                          C.threads(),
                          C.score()))
                  .withWritePressure(
                      new WritePressureOptions(
                          true,
                          3,
                          5,
                          64L << 30,
                          256L << 30,
                          4,
                          Duration.ofMillis(20),
                          WritePressureOptions.DEFAULT_DELAYED_WRITE_RATE)))
          .build();

  @Test
  void throttledWritesAreRetriedThenSurfacedNamingNodeAndCause() throws Exception {
    String leader = cluster.leader();
    // A commit needs a quorum: only with both followers STOPPED are writes refused (one alone
    // delays them, WritePressurePropagationTest).
    List<String> followers =
        cluster.runningNodes().stream().filter(n -> !n.equals(leader)).toList();
    String follower = followers.get(0);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ShaleClient patient =
        cluster.newClient(
            b ->
                b.meterRegistry(registry)
                    .throttlePolicy(new ThrottlePolicy(3, Duration.ofSeconds(2))));
    ShaleClient failFast = cluster.newClient(b -> b.throttlePolicy(ThrottlePolicy.failFast()));
    byte[] value = new byte[2048];

    // Through the admin API, as an operator would (and as the container nemesis does).
    for (String f : followers) {
      patient.cluster().pauseCompactions(f);
    }
    assertThat(cluster.node(follower).stateMachine().engine().compactionsPaused()).isTrue();
    assertThat(
            patient.cluster().status().stream()
                .filter(n -> n.getMember().getId().equals(follower))
                .findFirst()
                .orElseThrow()
                .getEngine()
                .getCompactionsPaused())
        .as("status shows the pause")
        .isTrue();
    WriteThrottledException refused = null;
    int i = 0;
    for (; i < 3000 && refused == null; i++) {
      try {
        patient.put(("k" + i).getBytes(), value);
      } catch (WriteThrottledException e) {
        refused = e;
      }
    }
    assertThat(refused).as("no write was refused in 3000").isNotNull();
    assertThat(refused.node()).isIn(followers);
    assertThat(refused.throttleCause()).isEqualTo("L0_FILES");
    assertThat(refused.retryAfter()).isPositive();
    assertThat(refused.getMessage())
        .contains("node " + refused.node())
        .contains("threshold 5")
        .contains("after 3 throttled retries");
    assertThat(
            registry.get("shale.client.retries").tag("reason", "WRITE_THROTTLED").counter().count())
        .isEqualTo(3);
    assertThat(patient.get("k" + (i - 1))).as("the refused write was not applied").isNull();

    long start = System.nanoTime();
    WriteThrottledException fast = null;
    try {
      failFast.put("fast".getBytes(), value);
    } catch (WriteThrottledException e) {
      fast = e;
    }
    assertThat(fast).isNotNull();
    assertThat(fast.getMessage()).contains("after 0 throttled retries");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);

    // Once the follower compacts again, a client with the default policy gets through.
    for (String f : followers) {
      patient.cluster().resumeCompactions(f);
    }
    assertThat(cluster.node(follower).stateMachine().engine().compactionsPaused()).isFalse();
    ShaleClient defaults = cluster.client();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    boolean accepted = false;
    while (!accepted && System.nanoTime() < deadline) {
      try {
        defaults.put("after".getBytes(), value);
        accepted = true;
      } catch (WriteThrottledException stillCompacting) {
        Thread.sleep(100);
      }
    }
    assertThat(accepted).isTrue();
  }
}
