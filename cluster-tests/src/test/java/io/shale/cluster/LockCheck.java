package io.shale.cluster;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.Txn;
import io.shale.client.TxnResult;
import io.shale.client.recipes.Lock;
import io.shale.client.recipes.Session;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The SDK's lock under the nemesis: clients take turns incrementing one counter under the lock,
 * each by reading it and writing the read value + 1 in a transaction fenced only by the lock's
 * token (no compare on the counter). Two holders acting at once would both write the same value and
 * lose an increment; a holder whose lease expired has its write refused by the fence. So after the
 * run, with S increments acknowledged and U of unknown outcome, the counter must lie in [S, S + U].
 * Sessions lost to the faults are replaced; the clients go on through kills, pauses and partitions.
 */
final class LockCheck implements AutoCloseable {
  private final ShaleClient client;
  private final String counterKey;
  private final String lockKey;
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicInteger acknowledged = new AtomicInteger();
  private final AtomicInteger unknown = new AtomicInteger();
  private final AtomicInteger fencedOff = new AtomicInteger();
  private final AtomicInteger sessionsLost = new AtomicInteger();
  private volatile boolean stop;

  LockCheck(ShaleClient client, String prefix, int holders) {
    this.client = client;
    this.counterKey = prefix + "counter";
    this.lockKey = prefix + "lock";
    for (int i = 0; i < holders; i++) {
      Thread t = new Thread(this::run, "lock-check-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  void start() {
    threads.forEach(Thread::start);
  }

  private void run() {
    Session session = null;
    while (!stop) {
      try {
        if (session == null || !session.alive()) {
          if (session != null) {
            sessionsLost.incrementAndGet();
            session.abandon();
          }
          session = Session.open(client, Duration.ofSeconds(3));
        }
        Lock lock = new Lock(session, lockKey);
        long token = lock.acquire(Duration.ofSeconds(20));
        try {
          Entry e = client.get(counterKey);
          long seen = e == null ? 0 : Long.parseLong(e.valueUtf8());
          TxnResult r;
          try {
            r =
                client
                    .txn()
                    .ifCreateIndex(lockKey, Txn.Cmp.EQUAL, token)
                    .thenPut(counterKey, Long.toString(seen + 1))
                    .commit();
          } catch (RuntimeException indeterminate) {
            unknown.incrementAndGet();
            throw indeterminate;
          }
          if (r.succeeded()) {
            acknowledged.incrementAndGet();
          } else {
            fencedOff.incrementAndGet();
          }
        } finally {
          lock.release();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        // A fault got in the way (timeout, no leader, lost session): go on with the next turn.
      }
    }
    if (session != null) {
      try {
        session.close(); // revokes the lease: the lock key goes now, not a TTL later
      } catch (RuntimeException e) {
        session.abandon(); // no leader now: the lease expires by itself
      }
    }
  }

  /**
   * Stops the holders (waiting for their turns to end and their sessions to close), so that the
   * cluster's data stops changing: called before the replicas are compared.
   */
  void stop() throws InterruptedException {
    stop = true;
    for (Thread t : threads) {
      t.join(120_000);
    }
  }

  /**
   * Stops the holders (if {@link #stop} was not called) and checks the counter (read after the
   * cluster healed); null when it holds, else what is wrong.
   */
  String problems() throws InterruptedException {
    stop();
    Entry e = client.get(counterKey);
    long counter = e == null ? 0 : Long.parseLong(e.valueUtf8());
    if (counter < acknowledged.get() || counter > acknowledged.get() + unknown.get()) {
      return "the lock's counter is "
          + counter
          + " after "
          + acknowledged.get()
          + " acknowledged fenced increments and "
          + unknown.get()
          + " of unknown outcome: two holders acted at once";
    }
    return null;
  }

  String summary() {
    return acknowledged.get()
        + " fenced increments under the lock ("
        + unknown.get()
        + " unknown, "
        + fencedOff.get()
        + " fenced off, "
        + sessionsLost.get()
        + " sessions lost)";
  }

  @Override
  public void close() {
    stop = true;
  }
}
