package io.shale.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The nemesis suite on a 5-node cluster, where a majority is 3: three nodes killed at once
 * (KILL_MAJORITY), two nodes cut off from three (PARTITION_HALVES), a bridge (PARTITION_BRIDGE),
 * and every fault kind mixed. Same checks as {@link NemesisIT}.
 */
class NemesisFiveNodesIT {
  private static final int SECONDS = Integer.getInteger("nemesis.seconds", 10);
  private static final Path OUT = Path.of(System.getProperty("basedir", "."), "target", "nemesis");
  private static NemesisCluster suite;

  /** The last run's number: from 500 + nemesis.firstRun on, apart from the 3-node runs'. */
  private static int run = 500 + Integer.getInteger("nemesis.firstRun", 1) - 1;

  @BeforeAll
  static void start() throws Exception {
    String base = DockerCluster.requireDockerAndBaseImage();
    DockerCluster.buildImage(base);
    suite = NemesisCluster.start(5);
  }

  @AfterAll
  static void stop() {
    if (suite != null) {
      suite.close();
    }
  }

  /**
   * Default: 3 of 5 killed at once, 2 cut off from 3, a bridge, every kind mixed. Other kinds or
   * more runs: {@code -Dnemesis.faults5=KILL_MAJORITY,MIXED -Dnemesis.runs5=10}.
   */
  @TestFactory
  Stream<DynamicTest> faultKinds() {
    String kinds = System.getProperty("nemesis.faults5", "");
    List<Nemesis.Fault> faults =
        kinds.isEmpty()
            ? List.of(
                Nemesis.Fault.KILL_MAJORITY,
                Nemesis.Fault.PARTITION_HALVES,
                Nemesis.Fault.PARTITION_BRIDGE,
                Nemesis.Fault.MIXED)
            : Nemesis.parse(kinds);
    int runs = Integer.getInteger("nemesis.runs5", 1);
    List<DynamicTest> tests = new ArrayList<>();
    for (Nemesis.Fault f : faults) {
      for (int r = 1; r <= runs; r++) {
        tests.add(
            DynamicTest.dynamicTest(
                f + " run " + r + " on 5 nodes",
                () -> NemesisRun.run(suite, f, ++run, SECONDS, OUT)));
      }
    }
    tests.add(
        DynamicTest.dynamicTest(
            "every node's files verified",
            () -> NemesisRun.verifyFiles(suite.cluster(), suite.client(), OUT)));
    return tests.stream();
  }
}
