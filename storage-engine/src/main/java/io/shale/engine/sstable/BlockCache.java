package io.shale.engine.sstable;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded cache of decoded, verified blocks, held off the Java heap, charged by bytes.
 * Thread-safe.
 *
 * <p>Why off the heap: a block cache on the heap keeps every block long enough to be promoted, and
 * then evicts it, so the old generation fills with dead blocks at the rate blocks are read. In a
 * heap of a few hundred MiB that is a full collection every second or so (see docs/benchmarks.md,
 * "Cause, change, effect"). Here each shard is a ring of direct-memory chunks (RocksDB's block
 * cache is native memory for the same reason); a hit copies the block into the reader's {@link
 * BlockReadBuffers} array, which the reader reuses, so neither a hit nor a miss leaves garbage.
 *
 * <p>Eviction is first-in first-out by chunk with a second chance: when the ring moves into a
 * chunk, the blocks written there a turn ago are dropped, and a hit on a block in the older half of
 * the ring copies it to the head, so blocks in use stay. Chunks are allocated as the ring first
 * reaches them, so memory grows with use up to the capacity; if direct memory ({@code
 * -XX:MaxDirectMemorySize}, by default the heap's size) runs out first, the ring stops growing and
 * a warning says so. A block larger than a chunk is not cached. Which block lies where is kept in
 * primitive arrays ({@link BlockIndex}, and per chunk the blocks written into it), so caching a
 * block allocates nothing on the heap either.
 */
public final class BlockCache {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
  private static final int MAX_SHARDS = 16;
  private static final long MIN_SHARD_BYTES = 1L << 20;
  private static final int MAX_CHUNK_BYTES = 256 << 10;
  private static final int MIN_CHUNK_BYTES = 16 << 10;

  private final Shard[] shards;
  private final long capacityBytes;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  public BlockCache(long capacityBytes) {
    this.capacityBytes = Math.max(0, capacityBytes);
    if (this.capacityBytes < MIN_CHUNK_BYTES) {
      shards = new Shard[0];
      return;
    }
    int n =
        Integer.highestOneBit(
            (int) Math.max(1, Math.min(MAX_SHARDS, this.capacityBytes / MIN_SHARD_BYTES)));
    long shardBytes = this.capacityBytes / n;
    int chunk = (int) Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, shardBytes / 8));
    shards = new Shard[n];
    for (int i = 0; i < n; i++) {
      shards[i] = new Shard(chunk, (int) Math.max(1, shardBytes / chunk));
    }
  }

  private Shard shard(long fileNumber, long offset) {
    int h = Long.hashCode(fileNumber * 0x9E3779B97F4A7C15L ^ offset);
    return shards[(h ^ h >>> 16) & (shards.length - 1)];
  }

  /**
   * The cached block at {@code offset} of table {@code fileNumber}, copied into {@code into}'s
   * decoded array (valid until its next use), or null.
   */
  Block get(long fileNumber, long offset, Path file, BlockReadBuffers into) {
    int length = -1;
    byte[] data = null;
    if (shards.length > 0) {
      Shard s = shard(fileNumber, offset);
      synchronized (s) {
        int slot = s.index.find(fileNumber, offset);
        if (slot >= 0) {
          length = s.index.length(slot);
          data = into.decoded(length);
          s.copyOut(fileNumber, offset, slot, data);
        }
      }
    }
    if (data == null) {
      misses.increment();
      return null;
    }
    hits.increment();
    return new Block(data, length, file, offset);
  }

  /** Count a block read that bypassed the cache (mapped tables): a miss, by definition. */
  void countUncachedRead() {
    misses.increment();
  }

  /** Cache a copy of {@code data[0, length)} as the block at {@code offset} of the table. */
  void put(long fileNumber, long offset, byte[] data, int length) {
    if (shards.length == 0) {
      return;
    }
    Shard s = shard(fileNumber, offset);
    synchronized (s) {
      s.place(fileNumber, offset, data, length);
    }
  }

  /** Drop every block of a deleted file so that its space is reused first. */
  public void evictFile(long fileNumber) {
    for (Shard s : shards) {
      synchronized (s) {
        s.evictFile(fileNumber);
      }
    }
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  /** Bytes of the blocks cached now (chunk tails and dropped blocks not counted). */
  public long usedBytes() {
    long sum = 0;
    for (Shard s : shards) {
      synchronized (s) {
        sum += s.used;
      }
    }
    return sum;
  }

  /**
   * Bytes of the blocks the shards' indexes list, summed slot by slot (tests of the accounting).
   */
  long indexedBytes() {
    long sum = 0;
    for (Shard s : shards) {
      synchronized (s) {
        sum += s.index.indexedBytes();
      }
    }
    return sum;
  }

  public long hits() {
    return hits.sum();
  }

  /** Data blocks read from table files: cache misses, plus every read of a mapped table. */
  public long misses() {
    return misses.sum();
  }

  /**
   * One ring: logical positions grow forever; position {@code p} lives in chunk {@code (p /
   * chunkBytes) % chunkCount}. Invariant: every block in {@link #index} lies within the last {@code
   * chunkCount} chunks written, so its bytes are intact; {@link #placed} lists, for each chunk, the
   * blocks written into it this turn (file, offset, position), so that entering the chunk again
   * drops exactly those still indexed there. Guarded by the shard's monitor.
   */
  private static final class Shard {
    private static final int RECORD = 3;

    private final int chunkBytes;
    private final ByteBuffer[] chunks;
    private int chunkCount;
    private long head;
    private long used;
    private final BlockIndex index;
    private final long[][] placed;
    private final int[] placedCount;

    Shard(int chunkBytes, int chunkCount) {
      this.chunkBytes = chunkBytes;
      this.chunkCount = chunkCount;
      this.chunks = new ByteBuffer[chunkCount];
      // Sized for blocks of about 4 KiB; it grows if they are smaller.
      this.index = new BlockIndex((int) Math.min(1 << 20, (long) chunkBytes * chunkCount / 4096));
      this.placed = new long[chunkCount][];
      this.placedCount = new int[chunkCount];
    }

    private int chunkSlot(long pos) {
      return (int) ((pos / chunkBytes) % chunkCount);
    }

    void copyOut(long file, long offset, int slot, byte[] into) {
      long pos = index.position(slot);
      int length = index.length(slot);
      chunks[chunkSlot(pos)].get((int) (pos % chunkBytes), into, 0, length);
      if (pos < head - (long) chunkCount * chunkBytes / 2) {
        place(file, offset, into, length); // in use and soon overwritten: a second chance
      }
    }

    void place(long file, long offset, byte[] data, int length) {
      if (length > chunkBytes || chunkCount == 0) {
        remove(file, offset);
        return;
      }
      int inChunk = (int) (head % chunkBytes);
      if (inChunk != 0 && inChunk + length > chunkBytes) {
        head += chunkBytes - inChunk; // a block never straddles two chunks
        inChunk = 0;
      }
      if (inChunk == 0 && !enterChunk(head / chunkBytes)) {
        return;
      }
      int c = chunkSlot(head);
      chunks[c].put(inChunk, data, 0, length);
      remove(file, offset);
      index.put(file, offset, head, length);
      used += length;
      record(c, file, offset, head);
      head += length;
    }

    private void remove(long file, long offset) {
      int slot = index.find(file, offset);
      if (slot >= 0) {
        used -= index.length(slot);
        index.removeAt(slot);
      }
    }

    private void record(int chunk, long file, long offset, long pos) {
      long[] r = placed[chunk];
      int n = placedCount[chunk];
      if (r == null || (n + 1) * RECORD > r.length) {
        r = placed[chunk] = java.util.Arrays.copyOf(r == null ? new long[0] : r, (n + 16) * RECORD);
      }
      r[n * RECORD] = file;
      r[n * RECORD + 1] = offset;
      r[n * RECORD + 2] = pos;
      placedCount[chunk] = n + 1;
    }

    /**
     * Make logical chunk {@code n} writable: allocate it on the ring's first turn, and drop the
     * blocks it held a turn ago. False if the cache has no memory at all.
     */
    private boolean enterChunk(long n) {
      if (n < chunkCount && chunks[(int) n] == null) {
        try {
          chunks[(int) n] = ByteBuffer.allocateDirect(chunkBytes);
        } catch (OutOfMemoryError e) {
          LOG.warn(
              "block cache: direct memory ran out after {} chunks of {} bytes in a shard that"
                  + " wanted {}; the cache stays at that size (raise -XX:MaxDirectMemorySize or"
                  + " lower lsm.block_cache_size)",
              n,
              chunkBytes,
              chunkCount);
          chunkCount = (int) n; // the ring closes here: chunk n becomes chunk 0
          if (chunkCount == 0) {
            return false;
          }
        }
      }
      int c = (int) (n % chunkCount);
      long[] r = placed[c];
      for (int i = 0; i < placedCount[c]; i++) {
        int slot = index.find(r[i * RECORD], r[i * RECORD + 1]);
        // Still here unless replaced, moved by a second chance, or evicted with its file.
        if (slot >= 0 && index.position(slot) == r[i * RECORD + 2]) {
          used -= index.length(slot);
          index.removeAt(slot);
        }
      }
      placedCount[c] = 0;
      return true;
    }

    void evictFile(long fileNumber) {
      used -= index.removeFile(fileNumber);
    }
  }
}
