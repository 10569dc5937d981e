package io.shale.node;

import io.shale.client.ShaleClient;
import io.shale.node.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A base for tests through the SDK against a real 3-node cluster in this JVM: the cluster, with a
 * leader, and a client of every node (30 s deadline); more clients from {@link #newClient}, all
 * closed after each test.
 */
abstract class ThreeNodeClusterTest {
  @TempDir Path dir;
  protected LocalCluster cluster;
  protected ShaleClient client;
  private final List<ShaleClient> clients = new ArrayList<>();

  @BeforeEach
  void startCluster() throws Exception {
    cluster = new LocalCluster(dir, 3);
    cluster.leader();
    client = newClient();
  }

  @AfterEach
  void stopCluster() throws Exception {
    clients.forEach(ShaleClient::close);
    cluster.close();
  }

  /** Another client of every node, closed after the test. */
  protected ShaleClient newClient() {
    ShaleClient c =
        ShaleClient.builder()
            .endpoints(cluster.apiEndpoints().toArray(String[]::new))
            .deadline(Duration.ofSeconds(30))
            .build();
    clients.add(c);
    return c;
  }

  /** Polls {@code condition} until it holds, failing after {@code within}. */
  protected static void await(BooleanSupplier condition, Duration within, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + within + ": " + what);
      }
      Thread.sleep(50);
    }
  }
}
