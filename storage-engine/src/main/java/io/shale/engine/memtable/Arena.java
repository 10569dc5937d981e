package io.shale.engine.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The memory of one memtable: append-only native chunks of values and of skiplist nodes (keys
 * inline), addressed by {@code chunk << 32 | byte offset}. Its chunks come from and go back to a
 * {@link ChunkPool}; none is on the Java heap, so the collector never sees a memtable's entries.
 *
 * <p>Thread-safety: one writer allocates and fills; readers only read what was published to them. A
 * record is published by a release store of its address (see {@link #setLinkRelease}) after it was
 * filled, and read after an acquire load of that address, which also makes the chunk tables written
 * before the store visible. Chunks are never moved: an address stays valid until {@link #recycle},
 * which the owner calls only once no reader can reach the arena. A node's longs are 8-byte aligned
 * (chunks are, and long records are allocated in whole longs), as acquire and release need.
 */
final class Arena {
  private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

  private final ChunkPool pool;
  private final int chunkBytes;

  /** Every chunk this arena holds, for {@link #recycle}: written by the writer only. */
  private final List<ChunkPool.Chunk> owned = new ArrayList<>();

  private volatile MemorySegment[] byteChunks = new MemorySegment[16];
  private int byteChunkCount;
  private int currentByteChunk = -1;
  private int bytePosition;

  private volatile MemorySegment[] longChunks = new MemorySegment[16];
  private int longChunkCount;
  private int currentLongChunk = -1;
  private int longPosition;

  /** Bytes of every record allocated so far: the chunks' used part. */
  private volatile long usedBytes;

  Arena(ChunkPool pool) {
    this.pool = pool;
    this.chunkBytes = pool.chunkBytes();
  }

  static int chunkOf(long address) {
    return (int) (address >>> 32);
  }

  static int offsetOf(long address) {
    return (int) address;
  }

  private static long address(int chunk, int offset) {
    return (long) chunk << 32 | offset;
  }

  /**
   * Writer only: room for {@code length} bytes, holding arbitrary old bytes; fill it through {@link
   * #bytes} before publishing.
   */
  long allocateBytes(int length) {
    usedBytes += length;
    if (length > chunkBytes) {
      // A segment of its own, so that a large value does not waste the rest of a chunk.
      return address(addByteChunk(pool.takeOversized(length)), 0);
    }
    if (currentByteChunk < 0 || bytePosition + length > chunkBytes) {
      currentByteChunk = addByteChunk(pool.take());
      bytePosition = 0;
    }
    long a = address(currentByteChunk, bytePosition);
    bytePosition += length;
    return a;
  }

  /** Writer only: room for {@code length} longs, holding arbitrary old values; write every one. */
  long allocateLongs(int length) {
    int bytes = length * Long.BYTES;
    usedBytes += bytes;
    if (bytes > chunkBytes) {
      return address(addLongChunk(pool.takeOversized(bytes)), 0);
    }
    if (currentLongChunk < 0 || longPosition + bytes > chunkBytes) {
      currentLongChunk = addLongChunk(pool.take());
      longPosition = 0;
    }
    long a = address(currentLongChunk, longPosition);
    longPosition += bytes;
    return a;
  }

  /** The chunk that holds the byte record at {@code address}; index it with {@link #offsetOf}. */
  MemorySegment bytes(long address) {
    return byteChunks[chunkOf(address)];
  }

  /**
   * The chunk that holds the long record at {@code address}; its long {@code slot} is at byte
   * {@code offsetOf(address) + 8 * slot}.
   */
  MemorySegment longs(long address) {
    return longChunks[chunkOf(address)];
  }

  /** A plain read of the long at {@code address + slot}: for fields written before publication. */
  long getLong(long address, int slot) {
    return longChunks[chunkOf(address)].get(
        ValueLayout.JAVA_LONG, offsetOf(address) + (long) slot * Long.BYTES);
  }

  /** Writer only: a plain write, for a record not yet published. */
  void setLong(long address, int slot, long value) {
    longChunks[chunkOf(address)].set(
        ValueLayout.JAVA_LONG, offsetOf(address) + (long) slot * Long.BYTES, value);
  }

  /** An acquire read: sees everything written before the matching {@link #setLinkRelease}. */
  long getLinkAcquire(long address, int slot) {
    return (long)
        LONG.getAcquire(longChunks[chunkOf(address)], offsetOf(address) + (long) slot * Long.BYTES);
  }

  /** Writer only: publishes {@code value} and every write made before it. */
  void setLinkRelease(long address, int slot, long value) {
    LONG.setRelease(
        longChunks[chunkOf(address)], offsetOf(address) + (long) slot * Long.BYTES, value);
  }

  long usedBytes() {
    return usedBytes;
  }

  /**
   * Give every chunk back to the pool and forget them. Precondition: no reader can reach this arena
   * any more, and nothing is written to it again.
   */
  void recycle() {
    byteChunks = new MemorySegment[0];
    longChunks = new MemorySegment[0];
    byteChunkCount = 0;
    longChunkCount = 0;
    pool.give(owned);
    owned.clear();
  }

  private int addByteChunk(ChunkPool.Chunk chunk) {
    owned.add(chunk);
    MemorySegment[] table = byteChunks;
    if (byteChunkCount == table.length) {
      table = Arrays.copyOf(table, table.length * 2);
    }
    table[byteChunkCount] = chunk.segment();
    // The volatile write publishes the slot (and a grown table) before any address into it.
    byteChunks = table;
    return byteChunkCount++;
  }

  private int addLongChunk(ChunkPool.Chunk chunk) {
    owned.add(chunk);
    MemorySegment[] table = longChunks;
    if (longChunkCount == table.length) {
      table = Arrays.copyOf(table, table.length * 2);
    }
    table[longChunkCount] = chunk.segment();
    longChunks = table;
    return longChunkCount++;
  }
}
