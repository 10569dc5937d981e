package io.shale.engine.memtable;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The native memory the engine's memtables fill: chunks of {@link #chunkBytes} outside the Java
 * heap, each with an arena of its own, lent to memtables and taken back after their flush for the
 * next memtables to fill. Off the heap, a memtable costs the collector nothing however large it
 * grows: no old generation that fills with each write burst and empties after each flush.
 *
 * <p>Holds at most {@code capacityBytes} of chunks waiting for reuse; a chunk given back beyond
 * that, or to a closed pool, is freed at once (its arena closed), as is a record's own segment
 * (values larger than a chunk are never pooled). An engine's pool may keep as much as all its
 * memtables can hold at once (the mutable one and {@code max_immutable_memtables} sealed ones):
 * that much is in use at the height of every write burst anyway. A chunk taken from the pool holds
 * old bytes: {@link Arena}'s callers write every byte of a record before publishing it.
 *
 * <p>Every chunk is counted from its allocation until it is freed ({@link #nativeBytes}), which is
 * the engine's memtable gauge and its leak check: once the engine closed and every reader let go,
 * the count is zero. Thread-safe.
 */
public final class ChunkPool implements AutoCloseable {
  /** One allocation: its segment and the arena that frees it. */
  record Chunk(java.lang.foreign.Arena owner, MemorySegment segment) {
    long bytes() {
      return segment.byteSize();
    }
  }

  private final int chunkBytes;
  private final long capacityBytes;
  private final ArrayDeque<Chunk> pooled = new ArrayDeque<>();
  private long pooledBytes;
  private long nativeBytes;
  private long liveChunks;
  private boolean closed;

  /**
   * @param chunkBytes the size of every chunk an arena of this pool allocates (records larger than
   *     this get segments of their own, which are never pooled)
   * @param capacityBytes the most the pool keeps; 0 keeps nothing
   */
  public ChunkPool(int chunkBytes, long capacityBytes) {
    if (chunkBytes < 1024 || Integer.bitCount(chunkBytes) != 1) {
      throw new IllegalArgumentException(
          "arena chunks must be a power of two of at least 1 KiB, got " + chunkBytes);
    }
    this.chunkBytes = chunkBytes;
    this.capacityBytes = capacityBytes;
  }

  /**
   * The pool an engine's memtables share: chunks of about an eighth of the memtable (between 16 KiB
   * and 1 MiB, so that a memtable is a few dozen segments and a small one wastes little), keeping
   * what {@code memtables} memtables fill (at least four chunks, so that small test engines recycle
   * too). A memtable fills more chunks than its size: each value chunk's unused tail, the chunks of
   * its nodes, and the batch that crosses the seal threshold; three chunks each covers them (with 4
   * MiB memtables, the seed benchmark's, 512 KiB chunks: eight for values, one or two for nodes).
   *
   * @param memtables the most memtables alive at once: the mutable one and the sealed ones
   */
  public static ChunkPool forMemtables(long memtableBytes, int memtables) {
    return new ChunkPool(chunkBytesFor(memtableBytes), nativeBytes(memtableBytes, memtables));
  }

  /**
   * The most native memory {@code memtables} memtables of {@code memtableBytes} fill, and so what
   * their pool keeps: each one's size and three chunks (see {@link #forMemtables}).
   */
  public static long nativeBytes(long memtableBytes, int memtables) {
    int chunk = chunkBytesFor(memtableBytes);
    return Math.max(memtables * (memtableBytes + 3L * chunk), 4L * chunk);
  }

  private static int chunkBytesFor(long memtableBytes) {
    long eighth = Math.max(1, memtableBytes / 8);
    return (int) Math.min(1 << 20, Math.max(16 << 10, Long.highestOneBit(eighth)));
  }

  public int chunkBytes() {
    return chunkBytes;
  }

  /** A chunk of {@link #chunkBytes}, recycled if one is pooled, aligned for longs. */
  synchronized Chunk take() {
    checkOpen();
    Chunk c = pooled.pollFirst();
    if (c != null) {
      pooledBytes -= c.bytes();
      return c;
    }
    return allocate(chunkBytes);
  }

  /** A segment of its own for one record larger than a chunk; never pooled. */
  synchronized Chunk takeOversized(long bytes) {
    checkOpen();
    return allocate(bytes);
  }

  private Chunk allocate(long bytes) {
    java.lang.foreign.Arena owner = java.lang.foreign.Arena.ofShared();
    Chunk c = new Chunk(owner, owner.allocate(bytes, Long.BYTES));
    nativeBytes += bytes;
    liveChunks++;
    return c;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the memtables' memory was freed: the engine is closed");
    }
  }

  /**
   * Take back the chunks of an arena no reader can reach any more: pooled while there is room,
   * freed otherwise. Precondition: nothing reads them again (see {@link Memtable#release}).
   */
  synchronized void give(List<Chunk> chunks) {
    for (Chunk c : chunks) {
      if (!closed && c.bytes() == chunkBytes && pooledBytes + chunkBytes <= capacityBytes) {
        pooled.addLast(c);
        pooledBytes += chunkBytes;
      } else {
        free(c);
      }
    }
  }

  private void free(Chunk c) {
    c.owner().close();
    nativeBytes -= c.bytes();
    liveChunks--;
  }

  /** Bytes of the chunks waiting in the pool. */
  public synchronized long pooledBytes() {
    return pooledBytes;
  }

  /** Native bytes allocated and not yet freed: in memtables and in the pool. */
  public synchronized long nativeBytes() {
    return nativeBytes;
  }

  /** Chunks not yet freed: zero once the engine is closed and every reader let go. */
  public synchronized long liveChunks() {
    return liveChunks;
  }

  /**
   * Free the pooled chunks; chunks still lent to memtables are freed when given back. Idempotent.
   */
  @Override
  public synchronized void close() {
    closed = true;
    for (Chunk c : pooled) {
      free(c);
    }
    pooled.clear();
    pooledBytes = 0;
  }
}
