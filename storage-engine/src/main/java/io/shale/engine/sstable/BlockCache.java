package io.shale.engine.sstable;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bounded LRU cache of decoded, verified blocks, charged by bytes. Split into shards with a lock
 * each, so that concurrent readers rarely contend. Thread-safe.
 */
public final class BlockCache {
  private static final int SHARDS = 16;
  private static final int ENTRY_OVERHEAD = 96;

  private record Key(long fileNumber, long offset) {}

  private final Shard[] shards = new Shard[SHARDS];
  private final long capacityBytes;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  public BlockCache(long capacityBytes) {
    this.capacityBytes = capacityBytes;
    for (int i = 0; i < SHARDS; i++) {
      shards[i] = new Shard(capacityBytes / SHARDS);
    }
  }

  private Shard shard(Key k) {
    int h = Long.hashCode(k.fileNumber * 0x9E3779B97F4A7C15L ^ k.offset);
    return shards[(h ^ h >>> 16) & (SHARDS - 1)];
  }

  Block get(long fileNumber, long offset) {
    Key k = new Key(fileNumber, offset);
    Block b = shard(k).get(k);
    if (b == null) {
      misses.increment();
    } else {
      hits.increment();
    }
    return b;
  }

  /** Count a block read that bypassed the cache (mapped tables): a miss, by definition. */
  void countUncachedRead() {
    misses.increment();
  }

  void put(long fileNumber, long offset, Block block) {
    if (capacityBytes <= 0) {
      return;
    }
    Key k = new Key(fileNumber, offset);
    shard(k).put(k, block);
  }

  /** Drop every block of a deleted file so that its memory is returned at once. */
  public void evictFile(long fileNumber) {
    for (Shard s : shards) {
      s.evictFile(fileNumber);
    }
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  public long usedBytes() {
    long sum = 0;
    for (Shard s : shards) {
      sum += s.used();
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

  private static final class Shard {
    private final long capacity;
    private long used;
    private final LinkedHashMap<Key, Block> map = new LinkedHashMap<>(256, 0.75f, true);

    Shard(long capacity) {
      this.capacity = capacity;
    }

    synchronized Block get(Key k) {
      return map.get(k);
    }

    synchronized void put(Key k, Block b) {
      Block old = map.put(k, b);
      if (old != null) {
        used -= old.sizeBytes() + ENTRY_OVERHEAD;
      }
      used += b.sizeBytes() + ENTRY_OVERHEAD;
      var it = map.entrySet().iterator();
      while (used > capacity && it.hasNext()) {
        Map.Entry<Key, Block> e = it.next();
        used -= e.getValue().sizeBytes() + ENTRY_OVERHEAD;
        it.remove();
      }
    }

    synchronized void evictFile(long fileNumber) {
      var it = map.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<Key, Block> e = it.next();
        if (e.getKey().fileNumber == fileNumber) {
          used -= e.getValue().sizeBytes() + ENTRY_OVERHEAD;
          it.remove();
        }
      }
    }

    synchronized long used() {
      return used;
    }
  }
}
