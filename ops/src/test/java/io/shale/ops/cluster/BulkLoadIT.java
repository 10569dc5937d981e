package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.Batch;
import io.shale.client.ShaleClient;
import io.shale.client.TlsSettings;
import io.shale.node.transport.ClusterCertificates;
import io.shale.ops.seed.ValueSizes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Bulk loads into a three-node TLS cluster of separate JVMs with 512 MiB heaps, one SDK client with
 * one batch of 5,000 keys in flight: small keys (values of 2-8 bytes), then the seed's value mix
 * (200 B to 64 KiB). Every node's live heap (sampled through its {@code /metrics} while the load
 * runs, and from a class histogram at the end) stays under the old-generation budget the node
 * computed at start, no node logs an {@code OutOfMemoryError}, and the last key of each load reads
 * back on every node. Short in CI; {@code ops/bin/memory-attacks bulk} is the long form (10 M small
 * keys, 2 GiB of the mix).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BulkLoadIT {
  private static final int SMALL_KEYS = Integer.getInteger("shale.bulk.keys", 1_000_000);
  private static final long MIX_BYTES = Long.getLong("shale.bulk.mix_bytes", 128L << 20);
  private static final int BATCH = 5_000;
  private static Path dir;
  private static ShaleTarget cluster;
  private static ShaleClient client;
  private static HeapWatch heap;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("bulk-load");
    cluster = new ShaleTarget(dir.resolve("cluster"), "512m", 1, true);
    Path certs = dir.resolve("cluster").resolve("certs");
    client =
        ShaleClient.builder()
            .endpoints(cluster.apiAddresses().toArray(String[]::new))
            .tls(
                TlsSettings.mutual(
                    certs.resolve("ca.pem"),
                    ClusterCertificates.clientCertificate(certs, "root"),
                    ClusterCertificates.clientKey(certs, "root")))
            .deadline(Duration.ofSeconds(60))
            .build();
    heap = new HeapWatch(cluster);
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.keepLogs(Path.of("target", "bulk-load-logs"));
      cluster.close();
    }
  }

  @AfterEach
  void everyNodeSurvivedWithinItsBudget() throws Exception {
    assertThat(cluster.allAlive()).as("every node process is the one started").isTrue();
    cluster.assertNoNodeLogged("OutOfMemoryError");
    heap.assertWithinBudgets();
  }

  @Test
  @Order(1)
  void smallKeysLoadWithinEveryNodesHeapBudget() throws Exception {
    long began = System.nanoTime();
    heap.start();
    try {
      for (int from = 0; from < SMALL_KEYS; from += BATCH) {
        Batch b = client.batch();
        for (int i = from; i < Math.min(SMALL_KEYS, from + BATCH); i++) {
          b.put(key("p/", i), Integer.toHexString(i).getBytes(StandardCharsets.US_ASCII));
        }
        b.commit();
      }
    } finally {
      heap.stop();
    }
    double seconds = (System.nanoTime() - began) / 1e9;
    System.out.printf(
        "loaded %,d small keys in %.1f s (%,.0f keys/s)%n",
        SMALL_KEYS, seconds, SMALL_KEYS / seconds);
    heap.printHistograms("after " + SMALL_KEYS + " small keys");
    byte[] last = key("p/", SMALL_KEYS - 1);
    for (int node = 0; node < 3; node++) {
      assertThat(cluster.getLinearizable(node, last)).as("node %d", node).isNotNull();
    }
  }

  @Test
  @Order(2)
  void theSeedsValueMixLoadsWithinEveryNodesHeapBudget() throws Exception {
    SplittableRandom rnd = new SplittableRandom(46);
    long bytes = 0;
    int n = 0;
    long began = System.nanoTime();
    heap.start();
    try {
      while (bytes < MIX_BYTES) {
        Batch b = client.batch();
        long batchBytes = 0;
        // A batch of the mix stops at 1 MiB, as a loader would cut it, or at 5,000 keys.
        while (b.size() < BATCH && batchBytes < (1 << 20)) {
          byte[] v = new byte[ValueSizes.next(rnd)];
          rnd.nextBytes(v);
          b.put(key("m/", n++), v);
          batchBytes += v.length;
        }
        b.commit();
        bytes += batchBytes;
      }
    } finally {
      heap.stop();
    }
    double seconds = (System.nanoTime() - began) / 1e9;
    System.out.printf(
        "loaded %,d keys of the seed's mix (%,d MiB) in %.1f s%n", n, bytes >> 20, seconds);
    heap.printHistograms("after " + (bytes >> 20) + " MiB of the seed's mix");
    byte[] last = key("m/", n - 1);
    for (int node = 0; node < 3; node++) {
      assertThat(cluster.getLinearizable(node, last)).as("node %d", node).isNotNull();
    }
  }

  private static byte[] key(String prefix, int i) {
    return String.format("%s%09d", prefix, i).getBytes(StandardCharsets.US_ASCII);
  }

  static List<String> ids() {
    return List.of("n1", "n2", "n3");
  }
}
