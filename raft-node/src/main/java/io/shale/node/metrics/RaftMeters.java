package io.shale.node.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.server.RaftServer;

/**
 * Raft state of one node as gauges read at scrape time, and a counter of leader changes (fed by the
 * state machine's leader-change notification).
 *
 * <p>{@code shale.raft.role} is 1 for the role in its tag and 0 otherwise, so a dashboard can count
 * leaders; {@code shale.raft.replication.lag} (leader only) is the commit index minus each
 * follower's match index, in entries.
 */
public final class RaftMeters {
  private static final List<String> ROLES = List.of("LEADER", "FOLLOWER", "CANDIDATE", "LISTENER");

  private final RaftServer.Division division;
  private final MeterRegistry registry;
  private final Counter leaderChanges;
  private final Map<String, AtomicLong> lag = new ConcurrentHashMap<>();

  public RaftMeters(RaftServer.Division division, MeterRegistry registry) {
    this.division = division;
    this.registry = registry;
    for (String role : ROLES) {
      Gauge.builder(
              "shale.raft.role",
              division,
              d -> d.getInfo().getCurrentRole().name().equals(role) ? 1 : 0)
          .tag("role", role)
          .description("1 when this node has the role")
          .register(registry);
    }
    Gauge.builder("shale.raft.term", division, d -> d.getInfo().getCurrentTerm())
        .register(registry);
    Gauge.builder("shale.raft.commit.index", division, d -> d.getRaftLog().getLastCommittedIndex())
        .register(registry);
    Gauge.builder("shale.raft.applied.index", division, d -> d.getInfo().getLastAppliedIndex())
        .register(registry);
    Gauge.builder("shale.raft.snapshot.index", division, d -> d.getRaftLog().getSnapshotIndex())
        .register(registry);
    Gauge.builder("shale.raft.log.start.index", division, d -> d.getRaftLog().getStartIndex())
        .register(registry);
    Gauge.builder("shale.raft.has.leader", division, d -> d.getInfo().getLeaderId() == null ? 0 : 1)
        .register(registry);
    leaderChanges =
        Counter.builder("shale.raft.leader.changes")
            .description("leader changes this node observed")
            .register(registry);
  }

  /** Called when this node learns of a new leader. */
  public void leaderChanged() {
    leaderChanges.increment();
  }

  /** Refreshes per-follower lag gauges; called before each scrape. */
  public void refresh() {
    var info = division.getInfo();
    if (!info.isLeader()) {
      lag.values().forEach(v -> v.set(0));
      return;
    }
    RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
    List<RaftProtos.ServerRpcProto> followers = role.getLeaderInfo().getFollowerInfoList();
    long[] match = info.getFollowerMatchIndices();
    long commit = division.getRaftLog().getLastCommittedIndex();
    // Both lists come from the leader's log appenders, in the same order.
    for (int i = 0; i < Math.min(followers.size(), match.length); i++) {
      String id = followers.get(i).getId().getId().toStringUtf8();
      lag.computeIfAbsent(
              id,
              f -> {
                AtomicLong v = new AtomicLong();
                Gauge.builder("shale.raft.replication.lag", v, AtomicLong::get)
                    .tag("follower", f)
                    .baseUnit("entries")
                    .register(registry);
                return v;
              })
          .set(Math.max(0, commit - match[i]));
    }
  }
}
