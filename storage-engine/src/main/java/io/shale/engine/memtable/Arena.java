package io.shale.engine.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The memory of one memtable: append-only chunks of bytes (values) and of longs (skiplist nodes,
 * keys inline), addressed by {@code chunk << 32 | offset}. A memtable holds a few hundred large
 * arrays instead of several small objects per entry, so a young collection copies its entries as a
 * few array moves, and nothing in them is traced.
 *
 * <p>Thread-safety: one writer allocates and fills; readers only read what was published to them. A
 * record is published by a release store of its address (see {@link #setLinkRelease}) after it was
 * filled, and read after an acquire load of that address, which also makes the chunk tables written
 * before the store visible. Chunks are never moved or reused: an address stays valid for the life
 * of the arena, which ends when the last reader drops the memtable.
 */
final class Arena {
  /** Byte chunks grow from this size, so a small memtable (and a test's) stays small. */
  private static final int FIRST_BYTE_CHUNK = 4 << 10;

  /** Byte chunks stop growing here; a record larger than this gets a chunk of its own. */
  static final int MAX_BYTE_CHUNK = 1 << 20;

  private static final int FIRST_LONG_CHUNK = 512;
  private static final int MAX_LONG_CHUNK = 64 << 10;

  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private volatile byte[][] byteChunks = new byte[16][];
  private int byteChunkCount;
  private int currentByteChunk = -1;
  private int bytePosition;
  private int byteChunkSize = FIRST_BYTE_CHUNK / 2;

  private volatile long[][] longChunks = new long[16][];
  private int longChunkCount;
  private int currentLongChunk = -1;
  private int longPosition;
  private int longChunkSize = FIRST_LONG_CHUNK / 2;

  /** Bytes of every record allocated so far: the chunks' used part. */
  private volatile long usedBytes;

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
   * Writer only: room for {@code length} bytes; fill it through {@link #bytes} before publishing.
   */
  long allocateBytes(int length) {
    if (length > MAX_BYTE_CHUNK) {
      // Its own chunk, so that a large value does not waste the rest of the current one.
      usedBytes += length;
      return address(addByteChunk(new byte[length]), 0);
    }
    if (currentByteChunk < 0 || bytePosition + length > byteChunks[currentByteChunk].length) {
      byteChunkSize = Math.min(MAX_BYTE_CHUNK, byteChunkSize * 2);
      currentByteChunk = addByteChunk(new byte[Math.max(byteChunkSize, length)]);
      bytePosition = 0;
    }
    long a = address(currentByteChunk, bytePosition);
    bytePosition += length;
    usedBytes += length;
    return a;
  }

  /** Writer only: room for {@code length} longs, zeroed. */
  long allocateLongs(int length) {
    if (currentLongChunk < 0 || longPosition + length > longChunks[currentLongChunk].length) {
      longChunkSize = Math.min(MAX_LONG_CHUNK, longChunkSize * 2);
      currentLongChunk = addLongChunk(new long[Math.max(longChunkSize, length)]);
      longPosition = 0;
    }
    long a = address(currentLongChunk, longPosition);
    longPosition += length;
    usedBytes += (long) length * Long.BYTES;
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
