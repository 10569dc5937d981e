package io.shale.node.watch;

import io.shale.node.statemachine.KeyChange;
import java.util.ArrayList;
import java.util.List;

/**
 * The changes this node applied lately, in index order, kept in memory up to a byte budget so that
 * a watch can start from a recent index, or resume there on this node after losing another. The
 * oldest changes go first when the budget is full; the newest entry's changes always stay. After
 * the state machine is (re)opened at an index, the history starts after it.
 *
 * <p>Invariant: every change of each index from {@link #oldestIndex} to {@link #appliedIndex} is
 * held (an index with no change to a user key holds none). Thread-safe: the apply thread adds,
 * watch streams read.
 */
public final class ChangeHistory {
  /** A change with the index of the entry that made it. */
  public record Event(long index, KeyChange change) {}

  /** Events read from the history, complete for every index up to {@code throughIndex}. */
  public record Read(List<Event> events, long throughIndex) {}

  private final long budgetBytes;

  /** Events from position {@code head} on; earlier positions were evicted. */
  private final ArrayList<Event> events = new ArrayList<>();

  private int head;
  private long bytes;
  private long oldestIndex = 1;
  private long appliedIndex;

  /**
   * @param budgetBytes keys and values held at most (beyond the newest entry's own)
   */
  public ChangeHistory(long budgetBytes) {
    this.budgetBytes = budgetBytes;
  }

  /** The state machine holds exactly the entries up to {@code index}: nothing older is kept. */
  public synchronized void restartAfter(long index) {
    events.clear();
    head = 0;
    bytes = 0;
    appliedIndex = index;
    oldestIndex = index + 1;
  }

  /** Entry {@code index} was applied with {@code changes} (called in index order). */
  public synchronized void applied(long index, List<KeyChange> changes) {
    if (index <= appliedIndex) {
      return;
    }
    for (KeyChange c : changes) {
      events.add(new Event(index, c));
      bytes += c.bytes();
    }
    appliedIndex = index;
    while (bytes > budgetBytes && head < events.size() && events.get(head).index() < index) {
      evictOldestIndex();
    }
    if (head > 1024 && head > events.size() / 2) {
      events.subList(0, head).clear();
      head = 0;
    }
  }

  private void evictOldestIndex() {
    long first = events.get(head).index();
    while (head < events.size() && events.get(head).index() == first) {
      bytes -= events.get(head).change().bytes();
      events.set(head, null);
      head++;
    }
    oldestIndex = first + 1;
  }

  /** The first index whose changes are held; a watch from an earlier one cannot be served. */
  public synchronized long oldestIndex() {
    return oldestIndex;
  }

  /** The last index applied. */
  public synchronized long appliedIndex() {
    return appliedIndex;
  }

  /**
   * The events from index {@code from} on that {@code filter} accepts, whole indexes only while
   * their keys and values stay within {@code maxBytes} (at least one index's worth is returned),
   * and the index through which the answer is complete. Null when {@code from} is older than {@link
   * #oldestIndex}: those changes are gone.
   */
  public synchronized Read read(long from, KeyFilter filter, long maxBytes) {
    if (from < oldestIndex) {
      return null;
    }
    List<Event> out = new ArrayList<>();
    int i = firstAtOrAfter(from);
    long through = appliedIndex;
    long taken = 0;
    while (i < events.size()) {
      long index = events.get(i).index();
      int end = i;
      long groupBytes = 0;
      List<Event> group = new ArrayList<>();
      while (end < events.size() && events.get(end).index() == index) {
        Event e = events.get(end);
        if (filter.accepts(e.change().key())) {
          group.add(e);
          groupBytes += e.change().bytes();
        }
        end++;
      }
      if (!out.isEmpty() && taken + groupBytes > maxBytes) {
        through = index - 1;
        break;
      }
      out.addAll(group);
      taken += groupBytes;
      i = end;
    }
    return new Read(out, through);
  }

  /** The position of the first event at or after {@code index} (binary search from head). */
  private int firstAtOrAfter(long index) {
    int lo = head;
    int hi = events.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (events.get(mid).index() < index) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
