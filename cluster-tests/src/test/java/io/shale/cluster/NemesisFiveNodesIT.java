package io.shale.cluster;

import io.shale.client.ShaleClient;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The nemesis suite on a 5-node cluster, where a majority is 3: three nodes killed at once
 * (KILL_MAJORITY), and the faults mixed. Same checks as {@link NemesisIT}.
 */
class NemesisFiveNodesIT {
  private static final int SECONDS = Integer.getInteger("nemesis.seconds", 15);
  private static final Path OUT = Path.of(System.getProperty("basedir", "."), "target",
      "nemesis");
  private static DockerCluster cluster;
  private static ShaleClient client;

  @BeforeAll
  static void start() throws Exception {
    String base = DockerCluster.requireDockerAndBaseImage();
    DockerCluster.buildImage(base);
    cluster = new DockerCluster(5);
    client = NemesisRun.start(cluster);
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void threeOfFiveKilled() throws Exception {
    NemesisRun.run(cluster, client, Nemesis.Fault.KILL_MAJORITY, 501, SECONDS, OUT);
  }

  @Test
  void mixedFaults() throws Exception {
    NemesisRun.run(cluster, client, Nemesis.Fault.MIXED, 502, SECONDS, OUT);
  }
}
