package io.shale.cluster;

import io.shale.client.Member;
import io.shale.client.ShaleClient;
import io.shale.client.ThrottlePolicy;
import io.shale.client.WriteThrottledException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Injects one kind of fault into a {@link DockerCluster} again and again while a workload runs,
 * healing each before the next: every 2-3 s a fault is held for 3-5 s, longer than the election
 * timeout (1 s), so elections happen during the load. Where a fault can hit the leader or a
 * follower (partitions, membership, pressure), the leader is chosen half of the time.
 *
 * <p>The cluster must run with {@link #NODE_CONFIG} and {@link #NODE_ARGS}, which make level 0 fill
 * quickly (for {@link Fault#PRESSURE}) and snapshots and log purges frequent (for {@link
 * Fault#SNAPSHOT_INSTALL}).
 */
final class Nemesis extends Thread {
  enum Fault {
    /** docker kill of the leader, then start. */
    KILL_LEADER,
    /** docker kill of a follower, then start. */
    KILL_FOLLOWER,
    /** docker kill of the leader and enough followers that no majority is left, then start. */
    KILL_MAJORITY,
    /** docker pause (SIGSTOP of every process) of the leader, then unpause. */
    PAUSE_LEADER,
    /** The leader disconnected from the network (isolated), then reconnected. */
    ISOLATE_LEADER,
    /** A minority (1 of 3, 2 of 5) cut off from the majority by iptables, then healed. */
    PARTITION_HALVES,
    /** Two sides that cannot see each other and one node that sees both, then healed. */
    PARTITION_BRIDGE,
    /** Leadership transferred to a random follower (Cluster.TransferLeadership); no heal. */
    TRANSFER_LEADER,
    /**
     * A member removed from the configuration, its container replaced by one with an empty disk
     * started to join, and added back: a member replaced, as an operator does it.
     */
    MEMBERSHIP,
    /**
     * One node's compactions paused through the admin API while extra writes fill its level 0 until
     * writes are refused (WriteThrottled), then resumed.
     */
    PRESSURE,
    /**
     * A follower killed; the others write past a snapshot and purge their logs; the follower
     * started, killed again while it installs the leader's snapshot, and started once more.
     */
    SNAPSHOT_INSTALL,
    /** Each round one of the above, at random. */
    MIXED
  }

  /** node.toml additions for the nemesis cluster: small memtables, low level-0 triggers. */
  static final String NODE_CONFIG =
      """

      [lsm]
      memtable_size = "64KiB"

      [lsm.compaction]
      level0_file_num_compaction_trigger = 2

      [lsm.write_pressure]
      level0_slowdown_writes_trigger = 4
      level0_stop_writes_trigger = 6
      """;

  /**
   * Frequent snapshots, small log segments and a small purge gap: lagging nodes install. Purges
   * keep 1,000 entries: with none kept, a member being added back (behind by up to 961 entries at
   * each snapshot on these 2 busy cores) installed a snapshot every 4 s for 3 minutes and never
   * caught up; a SNAPSHOT_INSTALL round writes 1,200 fills past the snapshot, more than that.
   */
  static final List<String> NODE_ARGS =
      List.of(
          "--set",
          "raft.snapshot_every_entries=1000",
          "--set",
          "raft.log_segment_size=256KiB",
          "--set",
          "raft.purge_gap=100",
          "--set",
          "raft.log_keep_entries=1000",
          "--set",
          "raft.snapshot_every_bytes=4MiB");

  private final DockerCluster cluster;
  private final ShaleClient client;
  private final ShaleClient filler;
  private final Fault fault;
  private final SplittableRandom random;
  final List<String> injected = new ArrayList<>();
  private volatile boolean stop;
  private volatile Throwable failure;

  Nemesis(DockerCluster cluster, ShaleClient client, Fault fault, long seed) {
    super("nemesis");
    this.cluster = cluster;
    this.client = client;
    this.fault = fault;
    this.random = new SplittableRandom(seed);
    // Extra writes of PRESSURE and SNAPSHOT_INSTALL: told at once when throttled.
    this.filler =
        cluster
            .clientBuilder()
            .endpoints(cluster.endpoints().toArray(String[]::new))
            .deadline(Duration.ofSeconds(20))
            .throttlePolicy(ThrottlePolicy.failFast())
            .build();
    setDaemon(true);
  }

  /** Stops injecting, heals what is still broken and returns the faults injected. */
  List<String> finish() throws InterruptedException {
    stop = true;
    join(300_000);
    filler.close();
    if (isAlive()) {
      throw new AssertionError("the nemesis did not stop within 300 s: " + injected);
    }
    if (failure != null) {
      throw new AssertionError("the nemesis failed after " + injected, failure);
    }
    return injected;
  }

  @Override
  public void run() {
    try {
      while (!stop) {
        sleep(2000 + random.nextInt(1000));
        if (stop) {
          break;
        }
        Fault f =
            fault == Fault.MIXED
                ? Fault.values()[random.nextInt(Fault.values().length - 1)]
                : fault;
        round(f, 3000 + random.nextInt(2000));
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private String leaderOrAny() {
    try {
      String leader = client.cluster().members().leaderId();
      if (!leader.isEmpty()) {
        return leader;
      }
    } catch (RuntimeException noAnswer) {
      // no leader known now: any node will do
    }
    List<String> ids = new ArrayList<>(cluster.nodes.keySet());
    return ids.get(random.nextInt(ids.size()));
  }

  private String otherThan(String id) {
    List<String> others = cluster.nodes.keySet().stream().filter(n -> !n.equals(id)).toList();
    return others.get(random.nextInt(others.size()));
  }

  /** The leader half of the time, else a random other node. */
  private String leaderOrFollower(String leader) {
    return random.nextBoolean() ? leader : otherThan(leader);
  }

  /** {@code first} and random others: a majority of the cluster (2 of 3, 3 of 5). */
  private List<String> majorityWith(String first) {
    List<String> others = new ArrayList<>(cluster.nodes.keySet());
    others.remove(first);
    List<String> victims = new ArrayList<>(List.of(first));
    while (victims.size() < cluster.nodes.size() / 2 + 1) {
      victims.add(others.remove(random.nextInt(others.size())));
    }
    return victims;
  }

  /** The nodes but {@code first}, shuffled. */
  private List<String> shuffledOthers(String first) {
    List<String> others = new ArrayList<>(cluster.nodes.keySet());
    others.remove(first);
    for (int i = others.size() - 1; i > 0; i--) {
      java.util.Collections.swap(others, i, random.nextInt(i + 1));
    }
    return others;
  }

  private void round(Fault f, long holdMillis) throws Exception {
    String leader = leaderOrAny();
    switch (f) {
      case TRANSFER_LEADER -> transfer(leader, holdMillis);
      case PARTITION_HALVES, PARTITION_BRIDGE -> partition(f, leader, holdMillis);
      case MEMBERSHIP -> replaceMember(leaderOrFollower(leader));
      case PRESSURE -> {
        // Writes are refused when the leader's engine is STOPPED, or when no quorum of replicas
        // can take writes; a lone stopped follower only delays them.
        String node = leaderOrFollower(leader);
        pressure(node.equals(leader) ? List.of(node) : majorityWith(node), holdMillis);
      }
      case SNAPSHOT_INSTALL -> killDuringSnapshotInstall(leader);
      default -> processFault(f, leader, holdMillis);
    }
  }

  private void transfer(String leader, long holdMillis) throws InterruptedException {
    String to = otherThan(leader);
    try {
      client.cluster().transferLeadership(to);
      injected.add("TRANSFER_LEADER " + leader + " -> " + to);
    } catch (RuntimeException refused) { // e.g. no leader at that moment: nothing changed
      injected.add("TRANSFER_LEADER " + leader + " -> " + to + " refused: " + refused.getMessage());
    }
    sleep(holdMillis);
  }

  /** Kill, pause or disconnect of the victims, held, then healed (every victim, always). */
  private void processFault(Fault f, String leader, long holdMillis) throws InterruptedException {
    List<String> victims =
        switch (f) {
          case KILL_LEADER, PAUSE_LEADER, ISOLATE_LEADER -> List.of(leader);
          case KILL_FOLLOWER -> List.of(otherThan(leader));
          case KILL_MAJORITY -> majorityWith(leader);
          default -> throw new IllegalStateException(f.name());
        };
    for (String v : victims) { // a victim that fails to go down is healed below like the others
      switch (f) {
        case KILL_LEADER, KILL_FOLLOWER, KILL_MAJORITY -> cluster.kill(v);
        case PAUSE_LEADER -> cluster.pause(v);
        case ISOLATE_LEADER -> cluster.disconnect(v);
        default -> throw new IllegalStateException(f.name());
      }
    }
    injected.add(f + " " + victims + " for " + holdMillis + " ms");
    try {
      sleep(holdMillis);
    } finally {
      RuntimeException first = null;
      for (String v : victims) {
        try {
          switch (f) {
            case KILL_LEADER, KILL_FOLLOWER, KILL_MAJORITY -> cluster.start(v);
            case PAUSE_LEADER -> cluster.unpause(v);
            case ISOLATE_LEADER -> cluster.reconnect(v);
            default -> throw new IllegalStateException(f.name());
          }
        } catch (RuntimeException e) {
          first = first == null ? e : first;
        }
      }
      if (first != null) {
        throw first;
      }
    }
  }

  /**
   * PARTITION_HALVES: a minority (with the leader half of the time) against the rest.
   * PARTITION_BRIDGE: one node (the leader half of the time) sees two sides that do not see each
   * other (1 and 1 of 3, 2 and 2 of 5).
   */
  private void partition(Fault f, String leader, long holdMillis) throws InterruptedException {
    List<String> a;
    List<String> b;
    String description;
    if (f == Fault.PARTITION_HALVES) {
      int minority = cluster.nodes.size() / 2;
      List<String> order = new ArrayList<>(shuffledOthers(leader));
      // The leader goes first (in the minority) or last (in the majority).
      if (random.nextBoolean()) {
        order.add(0, leader);
      } else {
        order.add(leader);
      }
      a = order.subList(0, minority);
      b = order.subList(minority, order.size());
      description = "PARTITION_HALVES " + a + " | " + b;
    } else {
      String bridge = leaderOrFollower(leader);
      List<String> others = shuffledOthers(bridge);
      a = others.subList(0, others.size() / 2);
      b = others.subList(others.size() / 2, others.size());
      description = "PARTITION_BRIDGE " + a + " | " + b + " bridged by " + bridge;
    }
    List<String> majority = a.size() > b.size() ? a : b;
    try {
      cluster.cut(a, b);
      sleep(holdMillis);
      // Recorded, so a partition that did not take hold would show: with the old leader cut
      // off from a majority, the majority has elected another by now.
      injected.add(
          description
              + " for "
              + holdMillis
              + " ms; leader "
              + leader
              + ", then "
              + leaderSeenBy(majority.get(0))
              + " as "
              + majority.get(0)
              + " saw it");
    } finally {
      cluster.healNetwork();
    }
  }

  private String leaderSeenBy(String id) {
    try (ShaleClient one =
        cluster
            .clientBuilder()
            .endpoints(cluster.endpoint(id))
            .deadline(Duration.ofSeconds(2))
            .build()) {
      String l = one.cluster().members().leaderId();
      return l.isEmpty() ? "none" : l;
    } catch (RuntimeException e) {
      return "unknown";
    }
  }

  /**
   * Removes {@code victim} from the configuration (a leader steps down once the change commits),
   * replaces its container by an empty one started to join, and adds it back.
   */
  private void replaceMember(String victim) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.SECONDS.toNanos(15);
    boolean removed = false;
    while (!removed && System.nanoTime() < deadline) {
      try {
        client.cluster().removeMember(victim);
      } catch (RuntimeException e) {
        // The change may still have committed (e.g. the leader removed itself and stepped down
        // before it answered), or be refused while the last one is still being committed
        // (FAILED_PRECONDITION): the configuration says, and the removal is asked again.
      }
      removed = awaitMembership(victim, false, Duration.ofSeconds(3));
    }
    if (!removed) {
      injected.add("MEMBERSHIP remove " + victim + " not committed within 15 s; left as is");
      return;
    }
    cluster.replaceWithJoiner(victim);
    // The empty node must first install a snapshot of everything written so far (20 MB and more
    // after the snapshot-install runs), which took over a minute on 2 busy cores.
    addBack(victim, Duration.ofSeconds(180));
    injected.add(
        "MEMBERSHIP "
            + victim
            + " removed, replaced by an empty node and added back in "
            + (System.nanoTime() - start) / 1_000_000
            + " ms");
  }

  /** Adds {@code id} (running with --join) until the configuration holds it; fails if not. */
  private void addBack(String id, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        client.cluster().addMember(new Member(id, id + ":7100", id + ":7200"));
      } catch (RuntimeException e) {
        last = e;
      }
      if (awaitMembership(id, true, Duration.ofSeconds(3))) {
        return;
      }
    }
    throw new AssertionError(id + " could not be added back within " + timeout, last);
  }

  private boolean awaitMembership(String id, boolean member, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        var m = client.cluster().members();
        if (!m.leaderId().isEmpty()
            && m.members().stream().anyMatch(x -> x.id().equals(id)) == member) {
          return true;
        }
      } catch (RuntimeException noAnswer) {
        // asked again
      }
      sleep(200);
    }
    return false;
  }

  /**
   * Pauses the compactions of {@code nodes} and writes 4 KiB values (memtables hold them whole;
   * blob separation happens at flush) until a write is refused as throttled, holds, then resumes.
   */
  private void pressure(List<String> nodes, long holdMillis) throws InterruptedException {
    long start = System.nanoTime();
    String node = String.join(",", nodes);
    for (String n : nodes) {
      untilAnswered(() -> client.cluster().pauseCompactions(n));
    }
    try {
      int written = 0;
      WriteThrottledException refused = null;
      byte[] value = new byte[4096];
      while (refused == null && System.nanoTime() - start < 30_000_000_000L && !stop) {
        for (Throwable failure : fill("fill/pressure/", written % 2000, i -> value)) {
          if (failure instanceof WriteThrottledException t) {
            refused = t;
          }
          // other failures (a leader change): write on
        }
        written += FILL_WINDOW;
      }
      injected.add(
          "PRESSURE "
              + node
              + " compactions paused; "
              + (refused == null
                  ? "no write refused"
                  : "writes refused after "
                      + written
                      + " fills ("
                      + refused.throttleCause()
                      + " on "
                      + refused.node()
                      + ")")
              + " in "
              + (System.nanoTime() - start) / 1_000_000
              + " ms; held "
              + holdMillis
              + " ms");
      sleep(holdMillis);
    } finally {
      for (String n : nodes) {
        resumeCompactions(n);
      }
    }
  }

  /** Puts in flight at once by {@link #fill}. */
  private static final int FILL_WINDOW = 16;

  /**
   * Writes keys {@code prefix + first} .. {@code prefix + (first + FILL_WINDOW - 1)} through the
   * fail-fast filler client, all in flight at once, and returns the failures (their causes).
   */
  private List<Throwable> fill(String prefix, int first, IntFunction<byte[]> value) {
    List<CompletableFuture<Void>> window = new ArrayList<>();
    for (int i = first; i < first + FILL_WINDOW; i++) {
      window.add(filler.putAsync((prefix + i).getBytes(), value.apply(i)));
    }
    List<Throwable> failures = new ArrayList<>();
    for (CompletableFuture<Void> w : window) {
      try {
        w.join();
      } catch (RuntimeException e) {
        failures.add(e.getCause() != null ? e.getCause() : e);
      }
    }
    return failures;
  }

  private void resumeCompactions(String node) throws InterruptedException {
    untilAnswered(() -> client.cluster().resumeCompactions(node));
  }

  /**
   * Runs an admin call on one node until it answers, for up to 60 s: the node may still be starting
   * after an earlier round's fault (a JVM start in a container takes 5-15 s; a MIXED run on 5 nodes
   * once failed here, asking a node restarted after KILL_MAJORITY to pause). Pausing or resuming
   * twice is harmless.
   */
  private void untilAnswered(Runnable call) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (true) {
      try {
        call.run();
        return;
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        sleep(500);
      }
    }
  }

  /**
   * Kills a follower, writes past a snapshot on the others (about 20 MB in 1,200 blob-sized values;
   * snapshots every 1,000 entries, then the log is purged), starts the follower, kills it once its
   * log says it is installing the leader's snapshot, and starts it again.
   */
  private void killDuringSnapshotInstall(String leader) throws InterruptedException {
    String follower = otherThan(leader);
    long start = System.nanoTime();
    cluster.kill(follower);
    boolean started = false;
    try {
      String filled = fillPastSnapshot();
      long fillMillis = (System.nanoTime() - start) / 1_000_000;
      try {
        client.cluster().snapshot(leader);
      } catch (RuntimeException e) {
        // a leader change: the automatic snapshot every 1,000 entries stands
      }
      int installsBefore = count(cluster.logs(follower), "installing a snapshot");
      int fetchedBefore = count(cluster.logs(follower), "fetched snapshot");
      cluster.start(follower);
      started = true;
      boolean installing =
          awaitLog(follower, "installing a snapshot", installsBefore, Duration.ofSeconds(30));
      sleep(random.nextInt(300));
      boolean finishedFirst = count(cluster.logs(follower), "fetched snapshot") > fetchedBefore;
      cluster.kill(follower);
      started = false;
      int fetchedAfterKill = count(cluster.logs(follower), "fetched snapshot");
      cluster.start(follower);
      started = true;
      boolean installed =
          awaitLog(follower, "fetched snapshot", fetchedAfterKill, Duration.ofSeconds(60));
      injected.add(
          "SNAPSHOT_INSTALL "
              + follower
              + ": "
              + filled
              + " in "
              + fillMillis
              + " ms, "
              + (installing
                  ? "killed " + (finishedFirst ? "just after" : "during") + " its snapshot install"
                  : "no install seen within 30 s, killed anyway")
              + "; after restart "
              + (installed ? "installed again" : "caught up without a new install")
              + " in "
              + (System.nanoTime() - start) / 1_000_000
              + " ms");
    } finally {
      if (!started) {
        cluster.start(follower);
      }
    }
  }

  /** Blob-sized fills of a SNAPSHOT_INSTALL round: 1,200 of 16 KiB, past a snapshot. */
  private static final int SNAPSHOT_FILLS = 1200;

  /** How long a SNAPSHOT_INSTALL round sends refused fills again before it goes on. */
  private static final Duration FILL_PATIENCE = Duration.ofSeconds(45);

  /**
   * Writes the SNAPSHOT_INSTALL round's fills, each window again until it is taken, and says how
   * many were written and what refused them (each refused put counted, every time). Sent once each,
   * most fail-fast fills were refused (384 to 1,200 of the 1,200 in each round of the runs at
   * 699e29a), and a round that writes nothing past a snapshot leaves its follower nothing to
   * install (run 31's second round). Sending them again until taken makes every round put its
   * follower behind the purged log, as the fault says it does. The patience is checked between
   * windows, so a window in flight (20 s deadline at most) may overrun it.
   */
  private String fillPastSnapshot() throws InterruptedException {
    byte[] value = new byte[16 << 10];
    random.nextBytes(value);
    long deadline = System.nanoTime() + FILL_PATIENCE.toNanos();
    Map<String, Integer> refusals = new TreeMap<>();
    int written = 0;
    while (written < SNAPSHOT_FILLS && System.nanoTime() < deadline) {
      List<Throwable> failures =
          fill(
              "fill/snapshot/",
              written,
              i -> {
                byte[] v = value.clone();
                v[0] = (byte) i;
                return v;
              });
      if (failures.isEmpty()) {
        written += FILL_WINDOW;
        continue;
      }
      long backoffMillis = 50;
      for (Throwable f : failures) {
        String why =
            f instanceof WriteThrottledException t
                ? t.throttleCause() + " on " + t.node()
                : f.getClass().getSimpleName();
        refusals.merge(why, 1, Integer::sum);
        if (f instanceof WriteThrottledException t && t.retryAfter() != null) {
          backoffMillis = Math.max(backoffMillis, Math.min(1000, t.retryAfter().toMillis()));
        }
      }
      sleep(backoffMillis); // the whole window again: a put of the same value is idempotent
    }
    return "filled "
        + written
        + " of "
        + SNAPSHOT_FILLS
        + (refusals.isEmpty() ? "" : " (refusals: " + refusals + ")");
  }

  private boolean awaitLog(String id, String text, int seenBefore, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (count(cluster.logs(id), text) > seenBefore) {
        return true;
      }
      sleep(20);
    }
    return false;
  }

  private static int count(String log, String text) {
    int n = 0;
    for (int i = log.indexOf(text); i >= 0; i = log.indexOf(text, i + 1)) {
      n++;
    }
    return n;
  }

  static List<Fault> parse(String names) {
    return Arrays.stream(names.split(",")).map(String::strip).map(Fault::valueOf).toList();
  }
}
