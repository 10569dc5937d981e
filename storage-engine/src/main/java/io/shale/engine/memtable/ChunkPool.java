package io.shale.engine.memtable;

import java.util.ArrayDeque;

/**
 * Arena chunks that flushed memtables gave back, for the next memtables to fill. Recycling keeps
 * the chunks in the old generation for good: without it, every memtable's chunks are promoted while
 * it fills and die there after its flush, and under a write burst that garbage is what forces full
 * collections.
 *
 * <p>Holds at most {@code capacityBytes}; chunks given beyond that are left to the garbage
 * collector. An engine's pool may keep as much as all its memtables can hold at once (the mutable
 * one and {@code max_immutable_memtables} sealed ones): that much is in use at the height of every
 * write burst anyway, and a smaller pool drops chunks after each flush only to allocate them again
 * for the next memtables, promoting them through the young generation each time. A chunk taken from
 * the pool holds old bytes: {@link Arena}'s callers write every byte and long of a record before
 * publishing it. Thread-safe.
 */
public final class ChunkPool {
  private final int chunkBytes;
  private final long capacityBytes;
  private final ArrayDeque<byte[]> bytes = new ArrayDeque<>();
  private final ArrayDeque<long[]> longs = new ArrayDeque<>();
  private long pooledBytes;

  /**
   * @param chunkBytes the size of every chunk an arena of this pool allocates (records larger than
   *     this get arrays of their own, which are never pooled)
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
   * and 1 MiB, so that a memtable is a few dozen arrays and a small one wastes little), keeping
   * what {@code memtables} memtables fill (at least four chunks, so that small test engines recycle
   * too). A memtable fills more chunks than its size: each value chunk's unused tail, the long
   * chunks of its nodes, and the batch that crosses the seal threshold; three chunks each covers
   * them (with 4 MiB memtables, the seed benchmark's, 512 KiB chunks: eight for values, one or two
   * for nodes).
   *
   * @param memtables the most memtables alive at once: the mutable one and the sealed ones
   */
  public static ChunkPool forMemtables(long memtableBytes, int memtables) {
    return new ChunkPool(chunkBytesFor(memtableBytes), heapBytes(memtableBytes, memtables));
  }

  /**
   * The most heap {@code memtables} memtables of {@code memtableBytes} fill, and so what their pool
   * keeps: each one's size and three chunks (see {@link #forMemtables}).
   */
  public static long heapBytes(long memtableBytes, int memtables) {
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

  /** A byte chunk of {@link #chunkBytes}, recycled if one is pooled. */
  synchronized byte[] takeBytes() {
    byte[] c = bytes.pollFirst();
    if (c == null) {
      return new byte[chunkBytes];
    }
    pooledBytes -= chunkBytes;
    return c;
  }

  /** A long chunk of {@link #chunkBytes} bytes, recycled if one is pooled. */
  synchronized long[] takeLongs() {
    long[] c = longs.pollFirst();
    if (c == null) {
      return new long[chunkBytes / Long.BYTES];
    }
    pooledBytes -= chunkBytes;
    return c;
  }

  /**
   * Take back the chunks of an arena no reader can reach any more. Precondition: nothing reads them
   * again (see {@link Memtable#release}).
   */
  synchronized void give(byte[][] byteChunks, int byteCount, long[][] longChunks, int longCount) {
    for (int i = 0; i < byteCount && pooledBytes + chunkBytes <= capacityBytes; i++) {
      if (byteChunks[i].length == chunkBytes) {
        bytes.addLast(byteChunks[i]);
        pooledBytes += chunkBytes;
      }
    }
    for (int i = 0; i < longCount && pooledBytes + chunkBytes <= capacityBytes; i++) {
      if (longChunks[i].length * Long.BYTES == chunkBytes) {
        longs.addLast(longChunks[i]);
        pooledBytes += chunkBytes;
      }
    }
  }

  /** Bytes of the chunks waiting in the pool. */
  public synchronized long pooledBytes() {
    return pooledBytes;
  }
}
