package io.shale.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * A 3-node cluster in containers under a steady stream of writes (values of 100 B, 2 KiB and 16
 * KiB, the last above the blob threshold) while faults are injected one after another: the leader
 * killed, a follower and then the leader cut off the network and reconnected, a node stopped and
 * started on its volume, the first once every node has caught up (see {@link
 * DockerCluster#awaitFormed}). After each: a leader within 30 s, every acknowledged write readable
 * with its value, and all nodes holding the same content (a hash of a full scan of each node
 * alone).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContainerFaultIT {
  private static DockerCluster cluster;
  private static ShaleClient client;
  private static Writer writer;

  /** Puts keys w/00000, w/00001, ... and remembers each acknowledged one with its value. */
  static final class Writer extends Thread {
    final Map<String, byte[]> acknowledged = new ConcurrentHashMap<>();
    final AtomicInteger failures = new AtomicInteger();
    final AtomicBoolean paused = new AtomicBoolean();
    volatile boolean done;
    volatile boolean idle;
    private final ShaleClient client;

    Writer(ShaleClient client) {
      super("writer");
      this.client = client;
      setDaemon(true);
    }

    @Override
    public void run() {
      int[] sizes = {100, 2048, 16384};
      for (int i = 0; !done; i++) {
        while (paused.get() && !done) {
          idle = true;
          sleepQuietly(20);
        }
        idle = false;
        String key = String.format("w/%05d", i);
        byte[] value = new byte[sizes[i % sizes.length]];
        Arrays.fill(value, (byte) ('a' + i % 26));
        try {
          client.put(key, new String(value));
          acknowledged.put(key, value);
        } catch (RuntimeException e) {
          failures.incrementAndGet(); // not acknowledged: may or may not be there
        }
      }
    }

    void pauseAndWait() {
      paused.set(true);
      while (!idle) {
        sleepQuietly(20);
      }
    }

    private static void sleepQuietly(long ms) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Any failed test saves every node's log, for study: what the nodes said meanwhile. */
  @RegisterExtension
  static final TestWatcher SAVE_LOGS_ON_FAILURE =
      new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
          Path out = Path.of(System.getProperty("basedir", "."), "target", "container-faults");
          String prefix = context.getRequiredTestMethod().getName() + "-";
          try {
            cluster.saveForStudy(out, prefix, false);
            System.err.println(prefix + ": node logs saved to " + out);
          } catch (Exception e) {
            System.err.println(prefix + ": could not save the node logs: " + e);
          }
        }
      };

  @BeforeAll
  static void start() throws Exception {
    String base = DockerCluster.requireDockerAndBaseImage();
    DockerCluster.buildImage(base);
    cluster = new DockerCluster(3);
    client = cluster.client();
    cluster.awaitLeader(client, Duration.ofSeconds(60));
    cluster.awaitFormed();
    writer = new Writer(client);
    writer.start();
    // Some writes acknowledged before the first fault (bounded wait, not a fixed sleep).
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (writer.acknowledged.size() < 20 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  @AfterAll
  static void stop() {
    if (writer != null) {
      writer.done = true;
    }
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The checks after every fault; the writer pauses so that the nodes can converge. */
  private static void checkHealed(String after) throws Exception {
    long start = System.nanoTime();
    String leader = cluster.awaitLeader(client, Duration.ofSeconds(30));
    long leaderMillis = (System.nanoTime() - start) / 1_000_000;
    writer.pauseAndWait();
    try {
      int acknowledged = writer.acknowledged.size();
      assertThat(acknowledged).as("writes acknowledged so far").isGreaterThan(0);
      for (Map.Entry<String, byte[]> w : writer.acknowledged.entrySet()) {
        Entry e = client.get(w.getKey());
        assertThat(e).as("%s: acknowledged write %s", after, w.getKey()).isNotNull();
        assertThat(e.value()).as("%s: value of %s", after, w.getKey()).isEqualTo(w.getValue());
      }
      String hash;
      try {
        hash = cluster.awaitConvergence(Duration.ofSeconds(60));
      } catch (AssertionError diverged) {
        throw new AssertionError(after + ": " + diverged.getMessage(), diverged);
      }
      System.out.printf(
          "%s: leader %s after %d ms; %d acknowledged writes all read back "
              + "(%d failed or timed out during faults); every node holds %s%n",
          after, leader, leaderMillis, acknowledged, writer.failures.get(), hash);
    } finally {
      writer.paused.set(false);
    }
  }

  @Test
  @Order(1)
  void theLeaderKilled() throws Exception {
    String leader = cluster.awaitLeader(client, Duration.ofSeconds(30));
    cluster.kill(leader);
    long killed = System.nanoTime();
    try {
      String next = cluster.awaitLeader(client, Duration.ofSeconds(30));
      assertThat(next).isNotEqualTo(leader);
      System.out.printf(
          "leader %s killed: %s leads and commits %d ms later%n",
          leader, next, (System.nanoTime() - killed) / 1_000_000);
      Thread.sleep(2000);
    } finally {
      cluster.start(leader); // failed or not: the next tests need all three nodes
    }
    checkHealed("leader " + leader + " killed and restarted");
  }

  @Test
  @Order(2)
  void aFollowerThenTheLeaderCutOffAndReconnected() throws Exception {
    String leader = cluster.awaitLeader(client, Duration.ofSeconds(30));
    String follower =
        cluster.nodes.keySet().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    cluster.disconnect(follower);
    try {
      Thread.sleep(3000);
    } finally {
      cluster.reconnect(follower);
    }
    checkHealed("follower " + follower + " disconnected 3 s");

    String leader2 = cluster.awaitLeader(client, Duration.ofSeconds(30));
    cluster.disconnect(leader2);
    try {
      Thread.sleep(5000); // longer than the election timeout: the others elect a new leader
    } finally {
      cluster.reconnect(leader2);
    }
    checkHealed("leader " + leader2 + " disconnected 5 s");
  }

  @Test
  @Order(3)
  void aNodeStoppedAndStartedOnItsVolume() throws Exception {
    String node = "n2";
    cluster.stop(node);
    Thread.sleep(3000);
    cluster.start(node);
    checkHealed(node + " stopped and started");
  }
}
