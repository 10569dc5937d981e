package io.shale.engine.memtable;

import io.shale.engine.concurrent.RefCount;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.ValueSlice;
import io.shale.engine.key.Keys;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;

/**
 * A sorted map of internal keys to entries: a {@link SkipList} whose nodes, keys and values live in
 * the memtable's own {@link Arena} of native chunks, so that its entries cost the garbage collector
 * nothing.
 *
 * <p>Thread-safety: one writer (the engine's write path, which serialises batches) and any number
 * of concurrent readers and iterators. A memtable becomes immutable when the engine seals it; it is
 * then only read, until its flush has been installed and no read state references it.
 *
 * <p>Life cycle: the memtable list holds one reference, and every {@link ReadState} listing the
 * memtable one more. Readers reach a memtable only through a read state they retained. When the
 * last reference goes, the arena's chunks go back to the pool for the next memtable, or are freed
 * when the pool is full or closed.
 */
public final class Memtable {
  /** Chunks of a memtable made without a pool (tests, tools): 64 KiB, never recycled. */
  private static final int UNPOOLED_CHUNK_BYTES = 64 << 10;

  private final Arena arena;
  private final SkipList list;
  private final long id;
  private final RefCount refs = new RefCount();
  private volatile boolean recycled;
  private volatile long largestSequence = -1;

  /** A memtable whose chunks are never recycled. */
  public Memtable(long id) {
    this(id, new ChunkPool(UNPOOLED_CHUNK_BYTES, 0));
  }

  /** A memtable that takes its chunks from {@code pool} and gives them back when released. */
  public Memtable(long id, ChunkPool pool) {
    this.id = id;
    this.arena = new Arena(pool);
    this.list = new SkipList(arena);
  }

  /** Take a reference for a read state. Precondition: the caller already holds one. */
  void retain() {
    if (!refs.tryRetain()) {
      throw new IllegalStateException("memtable " + id + " retained after it was recycled");
    }
  }

  /** Drop a reference; the last one recycles the arena's chunks. */
  void release() {
    if (refs.release("memtable " + id)) {
      recycled = true;
      arena.recycle();
    }
  }

  private void checkReadable() {
    if (recycled) {
      throw new IllegalStateException("memtable " + id + " read after its chunks were recycled");
    }
  }

  /** A number that orders memtables by creation: larger is newer. */
  public long id() {
    return id;
  }

  /**
   * Insert one entry; an entry with the same key and sequence (the same key twice in one batch) is
   * replaced. Precondition: called only by the single writer.
   */
  public void add(byte[] userKey, long sequence, ValueKind kind, byte[] value) {
    list.put(userKey, sequence, kind, value);
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
   * The newest entry of {@code userKey} with sequence {@code <= readSequence}, as a copy the caller
   * owns, or null if this memtable has none (which is different from a tombstone).
   */
  public StoredValue get(byte[] userKey, long readSequence) {
    checkReadable();
    long node = list.seekAtOrAfter(userKey, readSequence);
    if (node == 0 || !list.hasUserKey(node, userKey)) {
      return null;
    }
    long ref = list.valueRef(node);
    byte[] value = new byte[list.valueLength(ref)];
    list.copyValue(ref, value.length, value);
    return new StoredValue(list.kind(ref), value, list.sequence(node));
  }

  /**
   * The bytes this memtable's entries take: keys, values and skiplist nodes, including values
   * replaced within a batch. What the size limit and the memory gauge count.
   */
  public long approximateBytes() {
    return arena.usedBytes();
  }

  public boolean isEmpty() {
    return list.nodeCount() == 0;
  }

  public int entryCount() {
    return list.nodeCount();
  }

  /** The highest index applied to this memtable, or -1 if none. */
  public long largestSequence() {
    return largestSequence;
  }

  public InternalIterator iterator(Direction direction) {
    checkReadable();
    return new MemtableIterator(list, direction);
  }

  /**
   * A cursor over the skiplist. Forward it follows level-0 links; reverse it searches for the entry
   * before the current one from the top, as LevelDB does, at a cost of a search per step.
   */
  private static final class MemtableIterator implements InternalIterator {
    private final SkipList list;
    private final Direction direction;
    private long node;
    private byte[] userKey;

    /** The value record read once per position, so that kind and bytes come from the same put. */
    private long valueRef = -1;

    /** Where {@link #valueSlice} copies values out of native memory; grows, never shrinks. */
    private byte[] scratch = new byte[0];

    MemtableIterator(SkipList list, Direction direction) {
      this.list = list;
      this.direction = direction;
    }

    private void moveTo(long next) {
      node = next;
      userKey = null;
      valueRef = -1;
    }

    @Override
    public boolean valid() {
      return node != 0;
    }

    @Override
    public void seekToFirst() {
      moveTo(direction == Direction.FORWARD ? list.first() : list.last());
    }

    @Override
    public void seek(byte[] target) {
      moveTo(
          direction == Direction.FORWARD
              ? list.seekAtOrAfter(target, Keys.MAX_SEQUENCE)
              : list.seekBefore(target, Keys.MAX_SEQUENCE));
    }

    @Override
    public void next() {
      moveTo(
          direction == Direction.FORWARD
              ? list.next(node)
              : list.seekBefore(userKey(), list.sequence(node)));
    }

    @Override
    public byte[] userKey() {
      if (userKey == null) {
        userKey = list.userKey(node);
      }
      return userKey;
    }

    @Override
    public long sequence() {
      return list.sequence(node);
    }

    @Override
    public ValueKind kind() {
      return list.kind(valueRef());
    }

    private long valueRef() {
      if (valueRef == -1) {
        valueRef = list.valueRef(node);
      }
      return valueRef;
    }

    @Override
    public byte[] value() {
      long ref = valueRef();
      byte[] value = new byte[list.valueLength(ref)];
      list.copyValue(ref, value.length, value);
      return value;
    }

    /**
     * The value copied into this cursor's own buffer (a flush copies each value once, with no
     * allocation): valid until the cursor moves or is asked again, as the contract allows.
     */
    @Override
    public ValueSlice valueSlice() {
      long ref = valueRef();
      int length = list.valueLength(ref);
      if (scratch.length < length) {
        scratch = new byte[Math.max(length, scratch.length * 2)];
      }
      list.copyValue(ref, length, scratch);
      return new ValueSlice(scratch, 0, length);
    }

    @Override
    public void close() {}
  }
}
