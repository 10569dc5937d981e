package io.shale.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.Entry;
import io.shale.client.RetryPolicy;
import io.shale.client.ShaleClient;
import io.shale.testing.linearizability.HistoryFile;
import io.shale.testing.linearizability.LinearizabilityChecker;
import io.shale.testing.linearizability.Operation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The nemesis suite: a 3-node cluster in containers, concurrent clients doing random reads,
 * writes and compare-and-sets on 5 keys while a {@link Nemesis} injects one kind of fault after
 * another (kill of the leader, of a follower, of a majority; pause of the leader; the leader
 * isolated from the network; leadership transferred; all mixed). Each run: load for {@code nemesis.seconds} (default 15),
 * then heal, a leader within 30 s, a final read of every key, and the whole history checked for
 * linearizability; a failing history is saved under target/nemesis/ with its explanation.
 *
 * <p>Short form (CI): one run per fault kind. Long form: {@code ops/bin/nemesis --runs 20
 * --seconds 60}, i.e. {@code -Dnemesis.runs=20 -Dnemesis.seconds=60}; a summary table goes to
 * target/nemesis/summary.md.
 */
class NemesisIT {
  private static final int RUNS = Integer.getInteger("nemesis.runs", 1);
  private static final int SECONDS = Integer.getInteger("nemesis.seconds", 15);
  private static final String KINDS = System.getProperty("nemesis.faults", "");
  private static final Path OUT = Path.of(System.getProperty("basedir", "."), "target",
      "nemesis");

  private static DockerCluster cluster;
  private static ShaleClient client;
  private static int run;

  @BeforeAll
  static void start() throws Exception {
    String base = DockerCluster.requireDockerAndBaseImage();
    DockerCluster.buildImage(base);
    cluster = new DockerCluster(3);
    client = ShaleClient.builder().endpoints(cluster.endpoints().toArray(String[]::new))
        .deadline(Duration.ofSeconds(5))
        .retryPolicy(new RetryPolicy(20, Duration.ofMillis(20), Duration.ofMillis(200),
            Duration.ofSeconds(2)))
        .build();
    cluster.awaitLeader(client, Duration.ofSeconds(60));
    Files.createDirectories(OUT);
    Files.writeString(OUT.resolve("summary.md"), "| run | fault | seconds | operations | "
        + "unknown outcome | faults injected | check | anomalies |\n|---|---|---|---|---|---|---|---|\n");
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

  @TestFactory
  Stream<DynamicTest> everyFaultKind() {
    List<Nemesis.Fault> faults = KINDS.isEmpty() ? Arrays.asList(Nemesis.Fault.values())
        : Arrays.stream(KINDS.split(",")).map(String::strip).map(Nemesis.Fault::valueOf).toList();
    List<DynamicTest> tests = new ArrayList<>();
    for (Nemesis.Fault f : faults) {
      for (int r = 1; r <= RUNS; r++) {
        int round = r;
        tests.add(DynamicTest.dynamicTest(f + " run " + round, () -> oneRun(f)));
      }
    }
    return tests.stream();
  }

  /**
   * The suite can fail: reads served by one follower from its own applied state (STALE) lag
   * the writes the leader acknowledged, and the checker must say so, naming the stale read.
   */
  @org.junit.jupiter.api.Test
  void staleReadsFromAFollowerAreCaught() throws Exception {
    String leader = cluster.awaitLeader(client, Duration.ofSeconds(30));
    String follower = cluster.nodes.keySet().stream().filter(id -> !id.equals(leader))
        .findFirst().orElseThrow();
    try (ShaleClient stale = ShaleClient.builder().endpoints(cluster.endpoint(follower))
        .readConsistency(io.shale.client.ReadConsistency.STALE).build()) {
      LinearizabilityChecker.Result result = null;
      List<Operation> history = List.of();
      for (int attempt = 1; attempt <= 5; attempt++) {
        String prefix = "stale/" + attempt + "/";
        Workload load = new Workload(client, stale, prefix, 5, 2, attempt);
        load.start();
        Thread.sleep(5000);
        history = load.finish();
        result = LinearizabilityChecker.check(history);
        if (!result.linearizable()) {
          break;
        }
      }
      assertThat(result.linearizable()).as("stale follower reads in 5 runs of 5 s").isFalse();
      assertThat(result.explanation()).contains("read");
      Path saved = HistoryFile.write(OUT.resolve("stale-reads-example.txt"), history, result);
      System.out.println("stale follower reads caught (example in " + saved + "):\n"
          + result.explanation());
    }
  }

  private static void oneRun(Nemesis.Fault fault) throws Exception {
    int n = ++run;
    String prefix = "reg/" + n + "/";
    int keys = 5;
    Workload load = new Workload(client, prefix, 5, keys, n);
    Nemesis nemesis = new Nemesis(cluster, client, fault, n);
    long start = System.nanoTime();
    load.start();
    nemesis.start();
    List<String> injected;
    List<Operation> history;
    long healMillis;
    try {
      Thread.sleep(SECONDS * 1000L);
    } finally {
      try {
        injected = nemesis.finish();
      } finally {
        // The clients go on while the cluster heals: their calls in flight end either way.
        long healStart = System.nanoTime();
        cluster.awaitLeader(client, Duration.ofSeconds(30));
        healMillis = (System.nanoTime() - healStart) / 1_000_000;
        history = new ArrayList<>(load.finish());
      }
    }
    // The final read of every key, after every operation but those of unknown outcome.
    for (int k = 0; k < keys; k++) {
      long called = System.nanoTime();
      Entry e = client.get(prefix + k);
      history.add(Operation.read(history.size() + 100_000, 999, prefix + k,
          e == null ? null : e.valueUtf8(), called, System.nanoTime()));
    }
    long checkStart = System.nanoTime();
    LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
    long checkMillis = (System.nanoTime() - checkStart) / 1_000_000;
    double seconds = (System.nanoTime() - start) / 1e9;
    String line = String.format(Locale.ROOT, "| %d | %s | %.0f | %,d | %,d | %d | %s in %d ms | %d |%n",
        n, fault, seconds, history.size(), load.unknownOutcomes(), injected.size(),
        result.linearizable() ? "linearizable" : result.decided() ? "NOT linearizable"
            : "undecided", checkMillis,
        result.linearizable() || !result.decided() ? 0 : 1);
    Files.writeString(OUT.resolve("summary.md"), line, StandardOpenOption.APPEND);
    System.out.printf("nemesis run %d %s: %,d operations (%,d unknown outcome), faults %s; "
        + "leader %d ms after healing; %s (checked in %d ms)%n", n, fault, history.size(),
        load.unknownOutcomes(), injected, healMillis, result.linearizable() ? "linearizable"
            : "NOT linearizable", checkMillis);
    if (!result.linearizable()) {
      Path saved = HistoryFile.write(OUT.resolve("run-" + n + "-" + fault + ".txt"), history,
          result);
      throw new AssertionError("run " + n + " (" + fault + "): " + result.explanation()
          + "\nhistory saved to " + saved);
    }
    assertThat(load.completed()).as("operations that completed during the run").isPositive();
    assertThat(injected).as("faults injected").isNotEmpty();
  }
}
