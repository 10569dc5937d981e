package io.shale.cluster;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleException;
import io.shale.client.Watch;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import io.shale.testing.linearizability.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A watch over a nemesis run's keys, from before its first write, checked against the run's history
 * once the cluster healed: every acknowledged write (a put, an applied compare-and-set) delivered
 * exactly once; a write of unknown outcome at most once; nothing delivered that no one wrote or
 * that a compare-and-set refused; indexes never going back; each key's final value (as read after
 * the run) delivered at the index that read reported. (A write of unknown outcome may still apply
 * after the final reads, so the last delivered value need not be the final one.) The watch follows
 * the nemesis's kills, pauses and partitions through the SDK's resume.
 */
final class WatchCheck implements WatchListener, AutoCloseable {
  private final List<WatchEvent> events = new ArrayList<>();
  private volatile ShaleException error;
  private final Watch watch;

  WatchCheck(ShaleClient client, String prefix) throws InterruptedException {
    watch = client.watch(WatchOptions.prefix(prefix), this);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (watch.resumeIndex() == 0) {
      if (System.nanoTime() > deadline || error != null) {
        throw new AssertionError("the watch was not created within 30 s: " + error);
      }
      Thread.sleep(10);
    }
  }

  @Override
  public synchronized void onEvents(List<WatchEvent> batch, long throughIndex) {
    events.addAll(batch);
  }

  @Override
  public void onError(ShaleException e) {
    error = e;
  }

  /** Waits until the watch has delivered everything through {@code index}. */
  void awaitThrough(long index, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (watch.resumeIndex() <= index) {
      if (error != null) {
        throw new AssertionError("the watch ended: " + error.getMessage(), error);
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the watch reached index "
                + (watch.resumeIndex() - 1)
                + ", not "
                + index
                + " within "
                + timeout);
      }
      Thread.sleep(20);
    }
  }

  /** Events delivered so far. */
  synchronized int delivered() {
    return events.size();
  }

  /**
   * What is wrong with the delivered events against {@code history} and the final entries (absent
   * keys left out), or null when nothing is.
   */
  synchronized String problems(List<Operation> history, Map<String, Entry> finals) {
    Set<String> must = new HashSet<>();
    Set<String> may = new HashSet<>();
    for (Operation op : history) {
      boolean writes =
          op.kind() == Operation.Kind.WRITE || (op.kind() == Operation.Kind.CAS && op.applied());
      if (op.indeterminate() && op.kind() != Operation.Kind.READ) {
        may.add(op.input());
      } else if (writes) {
        must.add(op.input());
      }
    }
    Map<String, Integer> seen = new HashMap<>();
    Map<String, String> atIndex = new HashMap<>(); // "key@index" -> value
    long previous = 0;
    for (WatchEvent e : events) {
      String v = e.entry().valueUtf8();
      long index = e.entry().modIndex();
      if (index < previous) {
        return "event at index " + index + " after one at " + previous;
      }
      previous = index;
      if (e.type() != WatchEvent.Type.PUT) {
        return "a delete of " + e.entry().keyUtf8() + " that no one asked for";
      }
      if (!must.contains(v) && !may.contains(v)) {
        return "delivered a value no acknowledged or pending write wrote: " + abbreviate(v);
      }
      if (seen.merge(v, 1, Integer::sum) > 1) {
        return "delivered twice: " + abbreviate(v) + " at index " + index;
      }
      atIndex.put(e.entry().keyUtf8() + "@" + index, v);
    }
    for (String v : must) {
      if (!seen.containsKey(v)) {
        return "an acknowledged write was never delivered: " + abbreviate(v);
      }
    }
    for (Entry f : finals.values()) {
      String delivered = atIndex.get(f.keyUtf8() + "@" + f.modIndex());
      if (!f.valueUtf8().equals(delivered)) {
        return "delivered "
            + (delivered == null ? "nothing" : abbreviate(delivered))
            + " for "
            + f.keyUtf8()
            + " at index "
            + f.modIndex()
            + ", where the final read found "
            + abbreviate(f.valueUtf8());
      }
    }
    return null;
  }

  private static String abbreviate(String v) {
    return v.length() > 24 ? v.substring(0, 24) + "..." : v;
  }

  @Override
  public void close() {
    watch.close();
  }
}
