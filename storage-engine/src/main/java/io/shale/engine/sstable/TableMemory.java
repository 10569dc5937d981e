package io.shale.engine.sstable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The native memory of an engine's open tables. Each open table owns one shared {@link Arena}
 * holding its index block, its Bloom filter and its file mapping; the arena closes when the table's
 * last reference goes ({@link TableReader#release}), so the memory returns at once, not when a
 * collector gets to it, and a read that still reached it would fail with an exception instead of
 * reading freed memory. Keeping these off the heap is what stops a node's heap from growing with
 * its data: they are the only per-key structures an open table holds.
 *
 * <p>Counts the bytes and arenas alive, for the {@code [lsm] index_and_filter_memory} budget
 * (enforced by {@link TableCache}, which closes least recently used tables beyond it), the engine's
 * metrics and the leak check: once an engine is closed and its readers are released, {@link
 * #openArenas} is zero. Thread-safe.
 */
public final class TableMemory {
  private final long budgetBytes;
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong arenas = new AtomicLong();

  /**
   * @param budgetBytes what the open tables' index blocks and filters may hold together
   */
  public TableMemory(long budgetBytes) {
    if (budgetBytes < 0) {
      throw new IllegalArgumentException("index and filter budget must be >= 0: " + budgetBytes);
    }
    this.budgetBytes = budgetBytes;
  }

  /** The memory of one open table: allocations are counted until {@link #close}. */
  final class Region implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private long allocated;
    private boolean closed;

    private Region() {
      arenas.incrementAndGet();
    }

    /** A copy of {@code bytes[0, length)} in native memory, counted against the budget. */
    synchronized MemorySegment copyOf(byte[] bytes, int length) {
      MemorySegment s = arena.allocate(Math.max(1, length));
      MemorySegment.copy(bytes, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, length);
      allocated += length;
      TableMemory.this.bytes.addAndGet(length);
      return length == 0 ? s.asSlice(0, 0) : s;
    }

    /** The arena, for file mappings (counted as page cache, not here). */
    Arena arena() {
      return arena;
    }

    long allocatedBytes() {
      return allocated;
    }

    /** Free everything; idempotent. Precondition: no thread reads this region's memory again. */
    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      arena.close();
      TableMemory.this.bytes.addAndGet(-allocated);
      arenas.decrementAndGet();
    }
  }

  Region newRegion() {
    return new Region();
  }

  public long budgetBytes() {
    return budgetBytes;
  }

  /** Native bytes of index blocks and filters of tables not yet closed. */
  public long bytes() {
    return bytes.get();
  }

  /** Tables whose memory is not yet freed: zero once an engine closed and every reader is done. */
  public long openArenas() {
    return arenas.get();
  }
}
