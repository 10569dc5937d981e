package io.shale.cluster;

import io.shale.client.ShaleClient;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Injects one kind of fault into a {@link DockerCluster} again and again while a workload runs,
 * healing each before the next: every 2-3 s a fault is held for 3-5 s, longer than the election
 * timeout (1 s), so elections happen during the load.
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
    /** Leadership transferred to a random follower (Cluster.TransferLeadership); no heal. */
    TRANSFER_LEADER,
    /** Each round one of the above, at random. */
    MIXED
  }

  private final DockerCluster cluster;
  private final ShaleClient client;
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
    setDaemon(true);
  }

  /** Stops injecting, heals what is still broken and returns the faults injected. */
  List<String> finish() throws InterruptedException {
    stop = true;
    join(120_000);
    if (failure != null) {
      throw new AssertionError("the nemesis failed", failure);
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
        Fault f = fault == Fault.MIXED
            ? Fault.values()[random.nextInt(Fault.values().length - 1)] : fault;
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

  private void round(Fault f, long holdMillis) throws InterruptedException {
    String target = leaderOrAny();
    if (f == Fault.TRANSFER_LEADER) {
      String to = otherThan(target);
      try {
        client.cluster().transferLeadership(to);
        injected.add(f + " " + target + " -> " + to);
      } catch (RuntimeException refused) { // e.g. no leader at that moment: nothing changed
        injected.add(f + " " + target + " -> " + to + " refused: " + refused.getMessage());
      }
      sleep(holdMillis);
      return;
    }
    List<String> victims = switch (f) {
      case KILL_LEADER, PAUSE_LEADER, ISOLATE_LEADER, TRANSFER_LEADER -> List.of(target);
      case KILL_FOLLOWER -> List.of(otherThan(target));
      case KILL_MAJORITY -> majorityWith(target);
      case MIXED -> throw new IllegalStateException();
    };
    for (String v : victims) { // a victim that fails to go down is healed below like the others
      switch (f) {
        case KILL_LEADER, KILL_FOLLOWER, KILL_MAJORITY -> cluster.kill(v);
        case PAUSE_LEADER -> cluster.pause(v);
        case ISOLATE_LEADER -> cluster.disconnect(v);
        case TRANSFER_LEADER, MIXED -> throw new IllegalStateException();
      }
    }
    injected.add(f + " " + victims + " for " + holdMillis + " ms");
    try {
      sleep(holdMillis);
    } finally {
      // Heal every victim, even if healing one of them fails.
      RuntimeException first = null;
      for (String v : victims) {
        try {
          switch (f) {
            case KILL_LEADER, KILL_FOLLOWER, KILL_MAJORITY -> cluster.start(v);
            case PAUSE_LEADER -> cluster.unpause(v);
            case ISOLATE_LEADER -> cluster.reconnect(v);
            case TRANSFER_LEADER, MIXED -> throw new IllegalStateException();
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
}
