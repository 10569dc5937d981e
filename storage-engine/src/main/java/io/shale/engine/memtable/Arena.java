package io.shale.engine.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The memory of one memtable: append-only chunks of bytes (values) and of longs (skiplist nodes,
 * keys inline), addressed by {@code chunk << 32 | offset}. A memtable holds a few dozen large
 * arrays instead of several small objects per entry, so the garbage collector never traces its
 * entries; its chunks come from and go back to a {@link ChunkPool}.
 *
 * <p>Thread-safety: one writer allocates and fills; readers only read what was published to them. A
 * record is published by a release store of its address (see {@link #setLinkRelease}) after it was
 * filled, and read after an acquire load of that address, which also makes the chunk tables written
 * before the store visible. Chunks are never moved: an address stays valid until {@link #recycle},
 * which the owner calls only once no reader can reach the arena.
 */
final class Arena {
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private final ChunkPool pool;
  private final int chunkBytes;

  private volatile byte[][] byteChunks = new byte[16][];
  private int byteChunkCount;
  private int currentByteChunk = -1;
  private int bytePosition;

  private volatile long[][] longChunks = new long[16][];
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
      // An array of its own, so that a large value does not waste the rest of a chunk.
      return address(addByteChunk(new byte[length]), 0);
    }
    if (currentByteChunk < 0 || bytePosition + length > chunkBytes) {
      currentByteChunk = addByteChunk(pool.takeBytes());
      bytePosition = 0;
    }
    long a = address(currentByteChunk, bytePosition);
    bytePosition += length;
    return a;
  }

  /** Writer only: room for {@code length} longs, holding arbitrary old values; write every one. */
  long allocateLongs(int length) {
    usedBytes += (long) length * Long.BYTES;
    int chunkLongs = chunkBytes / Long.BYTES;
    if (length > chunkLongs) {
      return address(addLongChunk(new long[length]), 0);
    }
    if (currentLongChunk < 0 || longPosition + length > chunkLongs) {
      currentLongChunk = addLongChunk(pool.takeLongs());
      longPosition = 0;
    }
    long a = address(currentLongChunk, longPosition);
    longPosition += length;
    return a;
  }

  /** The chunk that holds the byte record at {@code address}; index it with {@link #offsetOf}. */
  byte[] bytes(long address) {
    return byteChunks[chunkOf(address)];
  }

  /** The chunk that holds the long record at {@code address}; index it with {@link #offsetOf}. */
  long[] longs(long address) {
    return longChunks[chunkOf(address)];
  }

  /** A plain read of the long at {@code address + slot}: for fields written before publication. */
  long getLong(long address, int slot) {
    return longChunks[chunkOf(address)][offsetOf(address) + slot];
  }

  /** Writer only: a plain write, for a record not yet published. */
  void setLong(long address, int slot, long value) {
    longChunks[chunkOf(address)][offsetOf(address) + slot] = value;
  }

  /** An acquire read: sees everything written before the matching {@link #setLinkRelease}. */
  long getLinkAcquire(long address, int slot) {
    return (long) LONGS.getAcquire(longChunks[chunkOf(address)], offsetOf(address) + slot);
  }

  /** Writer only: publishes {@code value} and every write made before it. */
  void setLinkRelease(long address, int slot, long value) {
    LONGS.setRelease(longChunks[chunkOf(address)], offsetOf(address) + slot, value);
  }

  long usedBytes() {
    return usedBytes;
  }

  /**
   * Give every chunk back to the pool and forget them. Precondition: no reader can reach this arena
   * any more, and nothing is written to it again.
   */
  void recycle() {
    pool.give(byteChunks, byteChunkCount, longChunks, longChunkCount);
    byteChunks = new byte[0][];
    longChunks = new long[0][];
    byteChunkCount = 0;
    longChunkCount = 0;
  }

  private int addByteChunk(byte[] chunk) {
    byte[][] table = byteChunks;
    if (byteChunkCount == table.length) {
      table = Arrays.copyOf(table, table.length * 2);
    }
    table[byteChunkCount] = chunk;
    // The volatile write publishes the slot (and a grown table) before any address into it.
    byteChunks = table;
    return byteChunkCount++;
  }

  private int addLongChunk(long[] chunk) {
    long[][] table = longChunks;
    if (longChunkCount == table.length) {
      table = Arrays.copyOf(table, table.length * 2);
    }
    table[longChunkCount] = chunk;
    longChunks = table;
    return longChunkCount++;
  }
}
