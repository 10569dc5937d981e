package io.shale.node.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.Engine;
import io.shale.node.statemachine.AppliedLeases;
import io.shale.node.statemachine.LeaseEvent;
import io.shale.node.statemachine.LeaseTable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's clock for leases: every replica follows which leases live (from applied entries);
 * the one that leads also keeps a deadline per lease, restarted when the lease is granted or kept
 * alive, and set afresh for every lease when it takes over (etcd's rule: a failover never expires a
 * lease early). {@link #check} revokes, through the log, the leases whose deadline has passed, and
 * finishes revokes that stopped part-way. Replicas' wall clocks never decide anything: the
 * deadlines are on this process's monotonic clock, and only the leader's count.
 *
 * <p>Thread-safe: the apply thread, the leader-change callback and the checking thread share it.
 */
public final class LeaseExpiry implements AppliedLeases {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseExpiry.class);

  /** The most revokes the checker keeps in flight at once. */
  static final int MAX_REVOKES_IN_FLIGHT = 64;

  private final String self;
  private final LongSupplier nanoClock;

  /** Live leases' granted TTLs, by id: the same on every replica that has applied as far. */
  private final Map<Long, Long> ttls = new HashMap<>();

  /** When each live lease expires on this node's clock; only while it leads. */
  private final Map<Long, Long> deadlines = new HashMap<>();

  /** Leases removed whose keys remain to be deleted (a revoke spanning several entries). */
  private final Set<Long> unfinished = new HashSet<>();

  /** Revokes sent and not yet answered. */
  private final Set<Long> revoking = new HashSet<>();

  private final Counter expired;
  private boolean leading;
  private LongFunction<CompletableFuture<?>> revoker =
      id -> CompletableFuture.completedFuture(null);

  /**
   * @param self this node's id, to tell when it is the leader
   * @param nanoClock a monotonic clock in nanoseconds ({@code System::nanoTime}; tests step one)
   */
  public LeaseExpiry(String self, LongSupplier nanoClock, MeterRegistry registry) {
    this.self = self;
    this.nanoClock = nanoClock;
    this.expired = registry.counter("shale.leases.expired");
    Gauge.builder("shale.leases.live", this, LeaseExpiry::live).register(registry);
  }

  /** Sends a revoke of the lease through the log; completes when it applied (or failed). */
  public synchronized void revokeWith(LongFunction<CompletableFuture<?>> revoker) {
    this.revoker = revoker;
  }

  @Override
  public synchronized void reload(Engine state) {
    LeaseTable table = LeaseTable.load(state);
    ttls.clear();
    ttls.putAll(table.ttls());
    unfinished.clear();
    unfinished.addAll(table.unfinishedRevokes());
    deadlines.clear();
    if (leading) {
      restartAll();
    }
  }

  @Override
  public synchronized void applied(List<LeaseEvent> events) {
    long now = nanoClock.getAsLong();
    for (LeaseEvent e : events) {
      switch (e.kind()) {
        case GRANTED, KEPT_ALIVE -> {
          ttls.put(e.id(), e.ttlMillis());
          if (leading) {
            deadlines.put(e.id(), now + Duration.ofMillis(e.ttlMillis()).toNanos());
          }
        }
        case REVOKED -> {
          forget(e.id());
          unfinished.remove(e.id());
        }
        case REVOKE_UNFINISHED -> {
          forget(e.id());
          unfinished.add(e.id());
        }
      }
    }
  }

  private void forget(long id) {
    ttls.remove(id);
    deadlines.remove(id);
  }

  /**
   * The cluster's leader is now {@code leader}: if it is this node, every lease's TTL starts afresh
   * on its clock; if not, this node forgets the deadlines (they are the leader's to keep).
   */
  public synchronized void leaderChanged(String leader) {
    boolean nowLeading = self.equals(leader);
    if (nowLeading && !leading) {
      leading = true;
      restartAll();
      LOG.info("{} leads: {} leases get their full TTL from now", self, ttls.size());
    } else if (!nowLeading && leading) {
      leading = false;
      deadlines.clear();
    }
  }

  private void restartAll() {
    long now = nanoClock.getAsLong();
    for (Map.Entry<Long, Long> e : ttls.entrySet()) {
      deadlines.put(e.getKey(), now + Duration.ofMillis(e.getValue()).toNanos());
    }
  }

  @Override
  public synchronized long remainingMillis(long id) {
    Long deadline = deadlines.get(id);
    if (!leading || deadline == null) {
      return -1;
    }
    return Math.max(0, Duration.ofNanos(deadline - nanoClock.getAsLong()).toMillis());
  }

  /**
   * On the leader: sends a revoke for every lease whose deadline has passed and every unfinished
   * revoke, at most {@link #MAX_REVOKES_IN_FLIGHT} at a time. Returns the ids it sent revokes for.
   * A revoke that fails is sent again by a later check while the lease is still due.
   */
  public List<Long> check() {
    List<Long> due = new ArrayList<>();
    LongFunction<CompletableFuture<?>> send;
    synchronized (this) {
      if (!leading) {
        return due;
      }
      long now = nanoClock.getAsLong();
      for (Map.Entry<Long, Long> e : deadlines.entrySet()) {
        if (now - e.getValue() >= 0 && room(due)) {
          due.add(e.getKey());
        }
      }
      for (Long id : unfinished) {
        if (room(due)) {
          due.add(id);
        }
      }
      due.removeIf(revoking::contains);
      revoking.addAll(due);
      send = revoker;
    }
    for (long id : due) {
      boolean expiring = isExpiring(id);
      CompletableFuture<?> f;
      try {
        f = send.apply(id);
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      f.whenComplete(
          (ok, e) -> {
            synchronized (this) {
              revoking.remove(id);
            }
            if (e != null) {
              LOG.debug("revoke of lease {} failed; a later check sends it again", id, e);
            } else if (expiring) {
              expired.increment();
            }
          });
    }
    return due;
  }

  private synchronized boolean isExpiring(long id) {
    return deadlines.containsKey(id);
  }

  private boolean room(List<Long> due) {
    return due.size() + revoking.size() < MAX_REVOKES_IN_FLIGHT;
  }

  /** Leases live as of the last applied entry. */
  public synchronized int live() {
    return ttls.size();
  }
}
