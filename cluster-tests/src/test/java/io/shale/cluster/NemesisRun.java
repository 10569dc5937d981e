package io.shale.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.engine.Verifier;
import io.shale.testing.linearizability.HistoryFile;
import io.shale.testing.linearizability.LinearizabilityChecker;
import io.shale.testing.linearizability.Operation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** One run of the nemesis suite on a running cluster (see {@link NemesisIT}). */
final class NemesisRun {
  private NemesisRun() {}

  /** {@code size} node containers configured for every fault kind (see {@link Nemesis}). */
  static DockerCluster cluster(int size) throws Exception {
    return new DockerCluster(size, Nemesis.NODE_CONFIG, Nemesis.NODE_ARGS);
  }

  /**
   * The suite's client (5 s deadline, quick retries, 2 s attempts), once a leader commits and every
   * node has caught up ({@link DockerCluster#awaitFormed}).
   */
  static ShaleClient start(DockerCluster cluster) throws Exception {
    ShaleClient client =
        cluster
            .clientBuilder()
            .endpoints(cluster.endpoints().toArray(String[]::new))
            .deadline(Duration.ofSeconds(5))
            .retryPolicy(
                new io.shale.client.RetryPolicy(
                    20, Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofSeconds(2)))
            .build();
    cluster.awaitLeader(client, Duration.ofSeconds(90));
    cluster.awaitFormed();
    return client;
  }

  /**
   * One run: load for {@code seconds} while {@code fault} is injected, heal, a leader within 30 s,
   * final reads, the history checked; a line appended to {@code out}/summary.md; a failing history
   * saved next to it. A run that fails, however it fails, saves the nodes' logs and data
   * directories as {@code out}/run-N-&lt;id&gt;.log and run-N-&lt;id&gt;-data, then has {@code
   * suite} replace its cluster before it throws, so that the runs after it are not failed by what
   * it left broken.
   */
  static void run(NemesisCluster suite, Nemesis.Fault fault, int n, int seconds, Path out)
      throws Exception {
    DockerCluster cluster = suite.cluster();
    try {
      runChecked(cluster, suite.client(), fault, n, seconds, out);
    } catch (Exception | AssertionError e) {
      // Printed now, in the run's place: the build reports failures only when the suite ends,
      // and a long-form part stopped early (run 82 of part 3) loses the reason.
      System.out.println(
          "nemesis run "
              + n
              + " "
              + fault
              + " on "
              + cluster.nodes.size()
              + " nodes FAILED: "
              + String.valueOf(e.getMessage()).replace('\n', ' '));
      try {
        // The nodes' logs and files are the only record of why (part 3 of the long form lost a
        // member's re-add after 3 minutes, and its logs went with the containers).
        cluster.saveForStudy(out, "run-" + n + "-", true);
        suite.replace();
        System.out.println(
            "nemesis: node logs and data directories of failed run "
                + n
                + " saved to "
                + out
                + "; its cluster replaced by a fresh "
                + suite.cluster().nodes.size()
                + "-node cluster for the runs after it");
      } catch (Exception | AssertionError replacing) {
        e.addSuppressed(replacing);
      }
      throw e;
    }
  }

  private static void runChecked(
      DockerCluster cluster, ShaleClient client, Nemesis.Fault fault, int n, int seconds, Path out)
      throws Exception {
    String prefix = "reg/" + n + "/";
    int keys = 5;
    Workload load = new Workload(client, prefix, 5, keys, n);
    Nemesis nemesis = new Nemesis(cluster, client, fault, n);
    long start = System.nanoTime();
    try (WatchCheck watch = new WatchCheck(client, prefix);
        LockCheck lock = new LockCheck(client, "lock/" + n + "/", 3)) {
      runWatched(
          cluster, client, fault, n, out, prefix, keys, load, nemesis, start, seconds, watch, lock);
    }
  }

  private static void runWatched(
      DockerCluster cluster,
      ShaleClient client,
      Nemesis.Fault fault,
      int n,
      Path out,
      String prefix,
      int keys,
      Workload load,
      Nemesis nemesis,
      long start,
      int seconds,
      WatchCheck watch,
      LockCheck lock)
      throws Exception {
    load.start();
    lock.start();
    nemesis.start();
    List<String> injected;
    List<Operation> history;
    long healMillis;
    long servingMillis;
    try {
      try {
        Thread.sleep(seconds * 1000L);
      } finally {
        try {
          injected = nemesis.finish();
        } finally {
          // The clients go on while the cluster heals: their calls in flight end either way.
          long healStart = System.nanoTime();
          try {
            // The 30 s for a leader count from when every process serves again: a JVM restarted
            // on these 2 shared cores takes 8 to 20 s to start (3 of 5 at once under
            // KILL_MAJORITY),
            // which measures the machine, not Raft's recovery.
            servingMillis = cluster.awaitServing(Duration.ofSeconds(120));
            long leaderStart = System.nanoTime();
            cluster.awaitLeader(client, Duration.ofSeconds(30));
            healMillis = (System.nanoTime() - leaderStart) / 1_000_000;
          } finally {
            // Stopped with no leader too: the failed run's cluster and client are replaced, and
            // clients left running on a closed client would spin on its errors. The lock's
            // holders stop too, so that the data holds still while the replicas are compared.
            history = new ArrayList<>(load.finish());
            lock.stop();
          }
        }
      }
    } catch (AssertionError nemesisOrHealFailed) {
      throw new AssertionError(
          "run " + n + " (" + fault + "): " + nemesisOrHealFailed.getMessage(),
          nemesisOrHealFailed);
    }
    // The final read of every key, after every operation but those of unknown outcome.
    java.util.Map<String, Entry> finals = new java.util.HashMap<>();
    long lastIndex = 0;
    for (int k = 0; k < keys; k++) {
      long called = System.nanoTime();
      Entry e = client.get(prefix + k);
      if (e != null) {
        finals.put(prefix + k, e);
        lastIndex = Math.max(lastIndex, e.modIndex());
      }
      history.add(
          Operation.read(
              history.size() + 100_000,
              999,
              prefix + k,
              e == null ? null : e.valueUtf8(),
              called,
              System.nanoTime()));
    }
    // Every replica, including one replaced or given a snapshot, holds the same data.
    String agreed;
    try {
      agreed = cluster.awaitConvergence(Duration.ofSeconds(60));
    } catch (AssertionError e) {
      throw new AssertionError(
          "run " + n + " (" + fault + ") after faults " + injected + ": " + e.getMessage(), e);
    }
    // Raft messages that reached a node other than the one they named and were refused
    // (RaftRecipientCheck), in the cluster's life so far: senders log the refusal.
    long misdirected = linesInLogs(cluster, "", "Raft message for");
    // The two ways a follower's install is freed from waiting for a leader that stopped leading
    // (SnapshotInstaller, StrandedInstallWatch): a fetch dropped because its requester was
    // replaced, and a fetched install reloaded on the current leader's notification, given by the
    // watchdog. Counted (the node's own lines only: Ratis logs the drop's exception again) so the
    // long form shows
    // how often each acted, not only that the runs passed. From the logs, not from the nodes'
    // shale_snapshot_fetches_total and shale_snapshot_stranded_installs_total: those start again
    // at 0 when the nemesis restarts a node, and a container's log outlives its restarts.
    long dropped = linesInLogs(cluster, "SnapshotInstaller", ") is dropped: ");
    long handedOff =
        linesInLogs(cluster, "StrandedInstallWatch", "given to this server: SNAPSHOT_INSTALLED");
    // The watch that ran through the faults delivered every acknowledged write once, in order.
    watch.awaitThrough(lastIndex, Duration.ofSeconds(60));
    String watchProblem = watch.problems(history, finals);
    if (watchProblem != null) {
      Path saved = out.resolve("run-" + n + "-" + fault + "-watch.txt");
      java.nio.file.Files.createDirectories(out);
      java.nio.file.Files.write(saved, history.stream().map(Operation::describe).toList());
      throw new AssertionError(
          "run "
              + n
              + " ("
              + fault
              + "): the watch "
              + watchProblem
              + "\nhistory saved to "
              + saved);
    }
    // The lock kept its holders apart through the faults: no fenced increment was lost.
    String lockProblem = lock.problems();
    if (lockProblem != null) {
      throw new AssertionError("run " + n + " (" + fault + "): " + lockProblem);
    }
    long checkStart = System.nanoTime();
    LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
    long checkMillis = (System.nanoTime() - checkStart) / 1_000_000;
    double elapsed = (System.nanoTime() - start) / 1e9;
    appendToSummary(
        out,
        summaryLine(
            n,
            fault.toString(),
            cluster.nodes.size(),
            elapsed,
            history.size(),
            load.unknownOutcomes(),
            injected.size(),
            result.linearizable()
                ? "linearizable"
                : result.decided() ? "NOT linearizable" : "undecided",
            checkMillis,
            result.linearizable() || !result.decided() ? 0 : 1));
    System.out.printf(
        "nemesis run %d %s on %d nodes: %,d operations (%,d unknown outcome), %,d watch events"
            + " all delivered once in order, faults %s; "
            + "every process serving %d ms after healing, a leader %d ms after that; replicas agree (%s); misdirected Raft messages refused so "
            + "far: %d; fetches dropped for a replaced leader so far: %d; stranded installs reloaded "
            + "by the watchdog so far: %d; %s (checked in %d ms)%n",
        n,
        fault,
        cluster.nodes.size(),
        history.size(),
        load.unknownOutcomes(),
        watch.delivered(),
        injected,
        servingMillis,
        healMillis,
        agreed,
        misdirected,
        dropped,
        handedOff,
        result.linearizable() ? "linearizable" : "NOT linearizable",
        checkMillis);
    System.out.printf("nemesis run %d %s: %s%n", n, fault, lock.summary());
    if (!result.linearizable()) {
      Path saved =
          HistoryFile.write(out.resolve("run-" + n + "-" + fault + ".txt"), history, result);
      throw new AssertionError(
          "run " + n + " (" + fault + "): " + result.explanation() + "\nhistory saved to " + saved);
    }
    assertThat(load.completed()).as("operations that completed during the run").isPositive();
    assertThat(injected).as("faults injected").isNotEmpty();
  }

  /**
   * One row of summary.md. ops/bin/nemesis-totals reads these columns by position: change both
   * together ({@code NemesisTotalsTest} holds them to it).
   */
  static String summaryLine(
      int run,
      String fault,
      int nodes,
      double seconds,
      int operations,
      long unknown,
      int faults,
      String check,
      long checkMillis,
      int anomalies) {
    return String.format(
        Locale.ROOT,
        "| %d | %s%s | %.0f | %,d | %,d | %d | %s in %d ms | %d |%n",
        run,
        fault,
        nodes == 3 ? "" : " (" + nodes + " nodes)",
        seconds,
        operations,
        unknown,
        faults,
        check,
        checkMillis,
        anomalies);
  }

  /** Appends {@code line} to {@code out}/summary.md, writing the table's header first. */
  static void appendToSummary(Path out, String line) throws java.io.IOException {
    Path summary = out.resolve("summary.md");
    Files.createDirectories(out);
    if (!Files.exists(summary)) {
      Files.writeString(
          summary,
          "| run | fault | seconds | operations | unknown outcome | "
              + "faults injected | check | anomalies |\n|---|---|---|---|---|---|---|---|\n");
    }
    Files.writeString(summary, line, StandardOpenOption.APPEND);
  }

  /**
   * Lines starting with {@code start} and containing {@code text} in the current containers' logs
   * (a member replaced by the nemesis takes its old container's log with it).
   */
  private static long linesInLogs(DockerCluster cluster, String logger, String text) {
    return cluster.nodes.keySet().stream()
        .mapToLong(
            id ->
                cluster
                    .logs(id)
                    .lines()
                    .filter(l -> l.contains(logger) && l.contains(text))
                    .count())
        .sum();
  }

  /**
   * Stops each node in turn (its engine closes cleanly), copies its data directory to {@code out},
   * starts it again, and runs the engine's verifier on the copy: every table block, blob record and
   * blob pointer, including what no scan through the API reads (the request records under the
   * internal prefix, where the suite's first corrupted pointers hid).
   */
  static void verifyFiles(DockerCluster cluster, ShaleClient client, Path out) throws Exception {
    List<String> problems = new ArrayList<>();
    for (String id : cluster.nodes.keySet()) {
      cluster.stop(id);
      Path copy = out.resolve("files-" + id + "-" + System.currentTimeMillis());
      String failed = cluster.copyData(id, copy);
      cluster.start(id);
      if (!failed.isEmpty()) {
        problems.add(id + ": its data directory could not be copied: " + failed);
        continue;
      }
      Verifier.Report r = Verifier.verify(copy.resolve("data").resolve("engine"));
      System.out.printf(
          "files of %s verified: %d tables, %,d blocks and blob records, %,d blob "
              + "pointers, %d problem(s)%n",
          id, r.tables(), r.blocks(), r.blobPointers(), r.problems().size());
      r.problems().forEach(p -> problems.add(id + ": " + p));
    }
    cluster.awaitLeader(client, Duration.ofSeconds(90));
    assertThat(problems).as("what the verifier found in the nodes' files").isEmpty();
  }
}
