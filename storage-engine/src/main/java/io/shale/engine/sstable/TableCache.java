package io.shale.engine.sstable;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * Keeps up to {@code capacity} tables open, and no more than the {@link TableMemory} budget of
 * index blocks and filters, least recently used closed first. A reader handed out by {@link
 * #acquire} stays usable until its caller releases it, even if the cache evicts it meanwhile (its
 * memory is freed then). Thread-safe.
 */
public final class TableCache implements AutoCloseable {
  private final int capacity;
  private final BlockCache blockCache;
  private final LongFunction<Path> pathOf;
  private final boolean mmap;
  private final io.shale.engine.io.FileReads reads;
  private final boolean adviseRandom;
  private final TableMemory memory;
  private final LinkedHashMap<Long, TableReader> open = new LinkedHashMap<>(64, 0.75f, true);

  /** Native bytes of the tables in {@link #open}: what the budget holds against. */
  private long openBytes;

  public TableCache(int capacity, BlockCache blockCache, LongFunction<Path> pathOf, boolean mmap) {
    this(
        capacity,
        blockCache,
        pathOf,
        mmap,
        new io.shale.engine.io.FileReads(),
        false,
        new TableMemory(Long.MAX_VALUE));
  }

  /**
   * As above; the open tables count the bytes they read in {@code reads}.
   *
   * @param adviseRandom advise the kernel that each table opened without a mapping is read at
   *     random ({@link io.shale.engine.io.ReadAdvice})
   */
  public TableCache(
      int capacity,
      BlockCache blockCache,
      LongFunction<Path> pathOf,
      boolean mmap,
      io.shale.engine.io.FileReads reads,
      boolean adviseRandom,
      TableMemory memory) {
    this.memory = memory;
    this.adviseRandom = adviseRandom && !mmap;
    this.mmap = mmap;
    this.reads = reads;
    this.capacity = Math.max(1, capacity);
    this.blockCache = blockCache;
    this.pathOf = pathOf;
  }

  /**
   * Native bytes of Bloom filters and index blocks not yet freed: the open tables' and those of
   * evicted tables that readers still hold.
   */
  public long filterAndIndexMemoryBytes() {
    return memory.bytes();
  }

  public TableMemory memory() {
    return memory;
  }

  /** Tables open in the cache (tests). */
  synchronized int openTables() {
    return open.size();
  }

  /** A retained reader of table {@code fileNumber}; the caller must {@link TableReader#release}. */
  public TableReader acquire(long fileNumber) throws IOException {
    synchronized (this) {
      TableReader r = open.get(fileNumber);
      if (r != null && r.retain()) {
        return r;
      }
    }
    TableReader fresh =
        TableReader.open(
            pathOf.apply(fileNumber), fileNumber, blockCache, mmap, adviseRandom, reads, memory);
    synchronized (this) {
      TableReader r = open.get(fileNumber);
      if (r != null && r.retain()) {
        fresh.release();
        return r;
      }
      open.put(fileNumber, fresh);
      openBytes += fresh.nativeBytes();
      fresh.retain();
      Iterator<Map.Entry<Long, TableReader>> it = open.entrySet().iterator();
      while ((open.size() > capacity || openBytes > memory.budgetBytes()) && it.hasNext()) {
        Map.Entry<Long, TableReader> e = it.next();
        if (e.getKey() != fileNumber) {
          it.remove();
          openBytes -= e.getValue().nativeBytes();
          e.getValue().release();
        }
      }
      return fresh;
    }
  }

  /** Forget a deleted file: close it (once its users are done) and drop its cached blocks. */
  public void evict(long fileNumber) {
    TableReader r;
    synchronized (this) {
      r = open.remove(fileNumber);
      if (r != null) {
        openBytes -= r.nativeBytes();
      }
    }
    if (r != null) {
      r.release();
    }
    blockCache.evictFile(fileNumber);
  }

  public BlockCache blockCache() {
    return blockCache;
  }

  @Override
  public synchronized void close() {
    for (TableReader r : open.values()) {
      r.release();
    }
    open.clear();
    openBytes = 0;
  }
}
