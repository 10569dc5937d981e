package io.shale.node.watch;

import io.shale.node.statemachine.KeyChange;
import java.util.ArrayList;
import java.util.List;

/**
 * The changes this node applied lately, in index order, kept in memory up to a budget of heap bytes
 * so that a watch can start from a recent index, or resume there on this node after losing another.
 * The oldest entries' changes go first when the budget is full; the newest entry's changes always
 * stay. After the state machine is (re)opened at an index, the history starts after it.
 *
 * <p>Each applied entry with changes is held as one byte array ({@link ChangeCodec}) in a ring of
 * references, and decoded into {@link Event}s only when read. The budget bounds {@link
 * #retainedBytes}: what those arrays and the ring really take on the heap.
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

  /*
   * Heap sizes on a 64-bit HotSpot JVM with compressed oops and compressed class pointers (the
   * default below a 32 GiB heap): an object header is 12 bytes, an array's 16 (with its length), a
   * reference 4 bytes, and every object is aligned to 8 bytes. Without compressed oops (a heap of
   * 32 GiB or more) a reference takes 8 bytes: the ring then takes up to twice what is counted.
   */
  static final int ARRAY_HEADER_BYTES = 16;
  static final int REFERENCE_BYTES = 4;
  static final int OBJECT_ALIGNMENT = 8;

  /** The ring's smallest capacity (a power of two, as every capacity). */
  private static final int MIN_CAPACITY = 8;

  private final long budgetBytes;

  /**
   * The held entries, oldest first, at positions {@code head} to {@code head + size - 1} (mod the
   * capacity); every other slot is null. It doubles when full and halves when a quarter full, so
   * its free slots stay a bounded share of what it holds.
   */
  private byte[][] ring = new byte[MIN_CAPACITY][];

  private int head;
  private int size;

  /** The retained bytes of the held entries' arrays (the ring itself not included). */
  private long entryBytes;

  private long oldestIndex = 1;
  private long appliedIndex;

  /**
   * @param budgetBytes heap bytes held at most ({@link #retainedBytes}), unless the newest entry
   *     alone needs more
   */
  public ChangeHistory(long budgetBytes) {
    this.budgetBytes = budgetBytes;
  }

  /**
   * The heap bytes an array of {@code length} elements of {@code elementBytes} each takes: its
   * header and elements, rounded up to the object alignment (see the constants above).
   */
  static long arrayBytes(long length, int elementBytes) {
    long raw = ARRAY_HEADER_BYTES + length * elementBytes;
    return (raw + OBJECT_ALIGNMENT - 1) / OBJECT_ALIGNMENT * OBJECT_ALIGNMENT;
  }

  /**
   * The heap bytes this history holds beyond its own fixed fields: the held entries' arrays and the
   * ring of references to them (including its free slots). What the budget bounds.
   */
  public synchronized long retainedBytes() {
    return entryBytes + arrayBytes(ring.length, REFERENCE_BYTES);
  }

  /** The state machine holds exactly the entries up to {@code index}: nothing older is kept. */
  public synchronized void restartAfter(long index) {
    ring = new byte[MIN_CAPACITY][];
    head = 0;
    size = 0;
    entryBytes = 0;
    appliedIndex = index;
    oldestIndex = index + 1;
  }

  /** Entry {@code index} was applied with {@code changes} (called in index order). */
  public synchronized void applied(long index, List<KeyChange> changes) {
    if (index <= appliedIndex) {
      return;
    }
    appliedIndex = index;
    if (changes.isEmpty()) {
      return; // nothing to hold: the index is covered by the invariant as it is
    }
    byte[] encoded = ChangeCodec.encode(index, changes);
    if (size == ring.length) {
      resize(ring.length * 2);
    }
    ring[(head + size) & (ring.length - 1)] = encoded;
    size++;
    entryBytes += arrayBytes(encoded.length, 1);
    while (size > 1 && retainedBytes() > budgetBytes) {
      evictOldest();
    }
  }

  private void evictOldest() {
    byte[] oldest = ring[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
    entryBytes -= arrayBytes(oldest.length, 1);
    // The indexes up to the next held entry's had no changes: they stay covered.
    oldestIndex = ChangeCodec.index(oldest) + 1;
    if (ring.length > MIN_CAPACITY && size <= ring.length / 4) {
      resize(ring.length / 2);
    }
  }

  /** Moves the held entries to a ring of {@code capacity} slots, from its first slot on. */
  private void resize(int capacity) {
    byte[][] moved = new byte[capacity][];
    for (int i = 0; i < size; i++) {
      moved[i] = entry(i);
    }
    ring = moved;
    head = 0;
  }

  /** The {@code i}th held entry, the oldest being the 0th. */
  private byte[] entry(int i) {
    return ring[(head + i) & (ring.length - 1)];
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
   * their keys and values (and previous values) stay within {@code maxBytes} (at least one index's
   * worth is returned), and the index through which the answer is complete. Null when {@code from}
   * is older than {@link #oldestIndex}: those changes are gone.
   */
  public synchronized Read read(long from, KeyFilter filter, long maxBytes) {
    if (from < oldestIndex) {
      return null;
    }
    List<Event> out = new ArrayList<>();
    long through = appliedIndex;
    long taken = 0;
    for (int i = firstAtOrAfter(from); i < size; i++) {
      byte[] encoded = entry(i);
      long index = ChangeCodec.index(encoded);
      List<KeyChange> group = ChangeCodec.decode(encoded, filter);
      long groupBytes = 0;
      for (KeyChange c : group) {
        groupBytes += c.bytes();
      }
      if (!out.isEmpty() && taken + groupBytes > maxBytes) {
        through = index - 1;
        break;
      }
      for (KeyChange c : group) {
        out.add(new Event(index, c));
      }
      taken += groupBytes;
    }
    return new Read(out, through);
  }

  /** The position of the first held entry at or after {@code index} (a binary search). */
  private int firstAtOrAfter(long index) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (ChangeCodec.index(entry(mid)) < index) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
