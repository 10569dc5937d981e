package io.shale.engine.memtable;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.InternalKey;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A sorted map of internal keys to entries, backed by a lock-free skiplist.
 *
 * <p>Thread-safety: one writer (the engine's write path, which serialises batches) and any number
 * of concurrent readers and iterators. A memtable becomes immutable when the engine seals it; it is
 * then only read, until its flush has been installed and no read state references it.
 */
public final class Memtable {
  /** Per-entry overhead charged against the size limit: skiplist node, key and entry objects. */
  static final int ENTRY_OVERHEAD = 64;

  private final ConcurrentSkipListMap<InternalKey, StoredValue> map = new ConcurrentSkipListMap<>();
  private final AtomicLong approximateBytes = new AtomicLong();
  private final long id;
  private volatile long largestSequence = -1;

  public Memtable(long id) {
    this.id = id;
  }

  /** A number that orders memtables by creation: larger is newer. */
  public long id() {
    return id;
  }

  /** Insert one entry. Precondition: called only by the single writer. */
  public void add(byte[] userKey, long sequence, ValueKind kind, byte[] value) {
    map.put(new InternalKey(userKey, sequence), new StoredValue(kind, value, sequence));
    approximateBytes.addAndGet(userKey.length + value.length + ENTRY_OVERHEAD);
    if (sequence > largestSequence) {
      largestSequence = sequence;
    }
  }

  /**
   * Record that every batch up to {@code sequence} has been applied to this memtable, even a batch
   * that wrote nothing, so that a flush makes that index durable.
   */
  public void markApplied(long sequence) {
    if (sequence > largestSequence) {
      largestSequence = sequence;
    }
  }

  /**
   * The newest entry of {@code userKey} with sequence {@code <= readSequence}, or null if this
   * memtable has none (which is different from a tombstone).
   */
  public StoredValue get(byte[] userKey, long readSequence) {
    Map.Entry<InternalKey, StoredValue> e = map.ceilingEntry(InternalKey.at(userKey, readSequence));
    if (e == null || !java.util.Arrays.equals(e.getKey().userKey(), userKey)) {
      return null;
    }
    return e.getValue();
  }

  public long approximateBytes() {
    return approximateBytes.get();
  }

  public boolean isEmpty() {
    return map.isEmpty();
  }

  public int entryCount() {
    return map.size();
  }

  /** The highest index applied to this memtable, or -1 if none. */
  public long largestSequence() {
    return largestSequence;
  }

  public InternalIterator iterator(Direction direction) {
    return new MemtableIterator(map, direction);
  }

  private static final class MemtableIterator implements InternalIterator {
    private final ConcurrentSkipListMap<InternalKey, StoredValue> map;
    private final Direction direction;
    private Iterator<Map.Entry<InternalKey, StoredValue>> it;
    private Map.Entry<InternalKey, StoredValue> current;

    MemtableIterator(ConcurrentSkipListMap<InternalKey, StoredValue> map, Direction direction) {
      this.map = map;
      this.direction = direction;
    }

    private void position(NavigableMap<InternalKey, StoredValue> view) {
      it = view.entrySet().iterator();
      current = it.hasNext() ? it.next() : null;
    }

    @Override
    public boolean valid() {
      return current != null;
    }

    @Override
    public void seekToFirst() {
      position(direction == Direction.FORWARD ? map : map.descendingMap());
    }

    @Override
    public void seek(byte[] target) {
      InternalKey first = InternalKey.first(target);
      position(
          direction == Direction.FORWARD
              ? map.tailMap(first, true)
              : map.headMap(first, false).descendingMap());
    }

    @Override
    public void next() {
      current = it.hasNext() ? it.next() : null;
    }

    @Override
    public byte[] userKey() {
      return current.getKey().userKey();
    }

    @Override
    public long sequence() {
      return current.getKey().sequence();
    }

    @Override
    public ValueKind kind() {
      return current.getValue().kind();
    }

    @Override
    public byte[] value() {
      // A copy: the array handed out must not alias the memtable's, which readers share.
      return current.getValue().value().clone();
    }

    @Override
    public void close() {}
  }
}
