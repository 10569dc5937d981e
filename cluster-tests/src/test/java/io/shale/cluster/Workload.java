package io.shale.cluster;

import io.shale.client.CasResult;
import io.shale.client.Entry;
import io.shale.client.Expectation;
import io.shale.client.InvalidRequestException;
import io.shale.client.ShaleClient;
import io.shale.client.Txn;
import io.shale.client.WriteThrottledException;
import io.shale.testing.linearizability.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Concurrent clients doing random reads, writes and compare-and-sets (a tenth of the operations as
 * transactions: if the value is the expected one, put) on a few keys (so that they conflict often),
 * recording every operation for the linearizability checker. Values are unique per write ("p3-17:"
 * then padding); one in ten is 9 KiB, above the engine's blob threshold. Reads go to every node in
 * turn (the SDK's default), so followers' read indexes and the leader's lease are what the checker
 * judges.
 *
 * <p>Outcomes: an answer is recorded as it is; a write refused by write pressure never happened
 * (dropped); a write that failed otherwise (timeout, no node reachable) may or may not have
 * happened (recorded with an unknown outcome); a read that failed constrains nothing (dropped).
 */
final class Workload {
  private final List<Operation> history = new ArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicInteger ok = new AtomicInteger();
  private final AtomicInteger unknown = new AtomicInteger();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stop;

  /** A malformed request: a bug in the test or the client, reported by {@link #finish}. */
  private volatile RuntimeException bug;

  private final ShaleClient reads;

  Workload(ShaleClient client, String prefix, int processes, int keys, long seed) {
    this(client, client, prefix, processes, keys, seed);
  }

  /** Reads (the plain ones, not a CAS's look before it) through {@code reads}. */
  Workload(
      ShaleClient client, ShaleClient reads, String prefix, int processes, int keys, long seed) {
    this.reads = reads;
    for (int p = 0; p < processes; p++) {
      int process = p;
      SplittableRandom random = new SplittableRandom(seed * 1000 + p);
      Thread t = new Thread(() -> run(client, prefix, process, keys, random), "workload-" + p);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  void start() {
    threads.forEach(Thread::start);
  }

  /** Stops the clients and returns the history (waiting for calls in flight to end). */
  List<Operation> finish() throws InterruptedException {
    stop = true;
    for (Thread t : threads) {
      t.join(120_000);
    }
    if (bug != null) {
      throw new AssertionError("a client sent a malformed request", bug);
    }
    synchronized (history) {
      return List.copyOf(history);
    }
  }

  int completed() {
    return ok.get();
  }

  int unknownOutcomes() {
    return unknown.get();
  }

  private void record(Operation op) {
    synchronized (history) {
      history.add(op);
    }
  }

  private void run(
      ShaleClient client, String prefix, int process, int keys, SplittableRandom random) {
    int n = 0;
    while (!stop) {
      String key = prefix + random.nextInt(keys);
      // 4 reads, 3 writes, 2 compare-and-sets, 1 compare-and-set as a transaction
      int kind = random.nextInt(10);
      String value =
          "p"
              + process
              + "-"
              + n++
              + ":"
              + "x".repeat(random.nextInt(10) == 0 ? 9 * 1024 : random.nextInt(100));
      String expected = null;
      if (kind >= 7) {
        // Expect what this process last saw (or absence, now and then): some apply, some not.
        try {
          Entry seen = client.get(key);
          expected = seen == null || random.nextInt(4) == 0 ? null : seen.valueUtf8();
        } catch (RuntimeException e) {
          continue; // the CAS was never sent
        }
      }
      int id = ids.getAndIncrement();
      long called = System.nanoTime();
      try {
        if (kind < 4) {
          Entry e = reads.get(key);
          record(
              Operation.read(
                  id, process, key, e == null ? null : e.valueUtf8(), called, System.nanoTime()));
        } else if (kind < 7) {
          client.put(key, value);
          record(Operation.write(id, process, key, value, called, System.nanoTime()));
        } else if (kind < 9) {
          CasResult r =
              client.compareAndSet(
                  key,
                  expected == null ? Expectation.absent() : Expectation.value(expected),
                  value);
          record(
              Operation.cas(
                  id, process, key, expected, value, r.applied(), called, System.nanoTime()));
        } else {
          Txn txn =
              expected == null
                  ? client.txn().ifVersion(key, Txn.Cmp.EQUAL, 0)
                  : client.txn().ifValue(key, Txn.Cmp.EQUAL, expected);
          boolean applied = txn.thenPut(key, value).elseGet(key).commit().succeeded();
          record(
              Operation.cas(id, process, key, expected, value, applied, called, System.nanoTime()));
        }
        ok.incrementAndGet();
      } catch (InvalidRequestException e) {
        bug = e;
        return;
      } catch (WriteThrottledException refused) {
        // Refused before entering the log: it did not happen.
      } catch (RuntimeException indeterminate) {
        if (kind >= 4) {
          unknown.incrementAndGet();
          record(
              kind < 7
                  ? Operation.write(id, process, key, value, called, Long.MAX_VALUE)
                  : Operation.cas(
                      id, process, key, expected, value, false, called, Long.MAX_VALUE));
        }
      }
    }
  }
}
