package io.shale.node.pressure;

import io.shale.engine.pressure.WritePressure;
import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * Decides, from the replicas' engine write pressure, what a write about to enter the log gets. A
 * commit needs a quorum, not every replica, so (as in CockroachDB's replication admission control
 * and TiKV's flow control) one slow replica must not stop the cluster:
 *
 * <ul>
 *   <li>refused ({@link WriteThrottledByReplica}) when this node's own engine is STOPPED, or when
 *       so many replicas are STOPPED that fewer than a quorum can take writes;
 *   <li>otherwise delayed while any replica is DELAYED or STOPPED, by its suggested delay (at least
 *       {@link #MIN_STOPPED_DELAY} for a STOPPED one) and never more than {@code maxDelay}: the
 *       slow replica still falls behind, and catches up from the log or a snapshot;
 *   <li>otherwise admitted at once.
 * </ul>
 *
 * It only decides; it never sleeps: the API's handler threads wait out a delay (KvService), so no
 * RPC thread of Ratis does. Replicas with no fresh report count as able: a node that is down is
 * Raft's business, not backpressure's.
 */
public final class WriteAdmission {
  /** The least delay a lone STOPPED replica costs a write, so that it can catch up. */
  static final Duration MIN_STOPPED_DELAY = Duration.ofMillis(10);

  /** What a write gets: refused (with why), or admitted after {@code delay} (zero: at once). */
  public record Decision(WriteThrottledByReplica refusal, Duration delay, String slowNode) {
    static final Decision ADMIT = new Decision(null, Duration.ZERO, null);
  }

  private final ReplicaPressure replicas;
  private final IntSupplier members;
  private final Duration maxDelay;

  /**
   * @param members how many voting members the configuration has (this node included)
   * @param maxDelay the longest a write is delayed for a slow replica
   */
  public WriteAdmission(ReplicaPressure replicas, IntSupplier members, Duration maxDelay) {
    this.replicas = replicas;
    this.members = members;
    this.maxDelay = maxDelay;
  }

  public Decision decide() {
    List<ReplicaPressure.Worst> fresh = replicas.fresh();
    ReplicaPressure.Worst self = fresh.get(0);
    if (self.pressure().condition() == WritePressure.Condition.STOPPED) {
      return new Decision(new WriteThrottledByReplica(self.node(), self.pressure()), null, null);
    }
    int n = Math.max(members.getAsInt(), fresh.size());
    int quorum = n / 2 + 1;
    int stopped = 0;
    ReplicaPressure.Worst worstStopped = null;
    ReplicaPressure.Worst slowest = null;
    Duration delay = Duration.ZERO;
    for (ReplicaPressure.Worst w : fresh) {
      WritePressure p = w.pressure();
      Duration d;
      switch (p.condition()) {
        case STOPPED -> {
          stopped++;
          if (worstStopped == null || p.worseThan(worstStopped.pressure())) {
            worstStopped = w;
          }
          d = max(p.suggestedDelay(), MIN_STOPPED_DELAY);
        }
        case DELAYED -> d = max(p.suggestedDelay(), Duration.ofMillis(1));
        default -> d = Duration.ZERO;
      }
      if (d.compareTo(delay) > 0) {
        delay = d;
        slowest = w;
      }
    }
    if (n - stopped < quorum) {
      return new Decision(
          new WriteThrottledByReplica(worstStopped.node(), worstStopped.pressure()), null, null);
    }
    if (slowest == null) {
      return Decision.ADMIT;
    }
    return new Decision(null, delay.compareTo(maxDelay) > 0 ? maxDelay : delay, slowest.node());
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }
}
