package io.shale.engine.sstable;

/**
 * Scratch arrays that readers reuse across the blocks they read, so that reading a block from disk
 * allocates only what outlives the read.
 *
 * <p>{@link #stored} is the calling thread's array for a block as stored (contents and trailer)
 * while it is verified and decoded; nothing may keep it once the block is decoded. {@link #decoded}
 * is one reader's array for the decoded contents of a block that nobody keeps once the reader moves
 * on (a compaction input, a lookup that does not fill the block cache); the next call overwrites
 * it, so the reader must be done with its previous block first.
 *
 * <p>A scan's table iterators {@link #borrow} their buffers from a small pool per thread and give
 * them back when closed: a scan opens an iterator per level and level-0 file, and allocating their
 * arrays anew made a third of the bytes a mixed workload allocated. Their read-ahead windows are
 * direct buffers of the thread's {@link TableReader#SCAN_WINDOWS}, given back on close too.
 *
 * <p>Arrays above {@link #KEEP_MAX_BYTES} are not kept: a rare huge block should not pin its array
 * in every thread. Not thread-safe: one instance per reader.
 */
final class BlockReadBuffers {
  static final int KEEP_MAX_BYTES = 256 << 10;

  private static final ThreadLocal<BlockReadBuffers> PER_THREAD =
      ThreadLocal.withInitial(BlockReadBuffers::new);

  /** Buffers a thread keeps for reuse. */
  static final int POOL_MAX = 12;

  private static final ThreadLocal<java.util.ArrayDeque<BlockReadBuffers>> POOL =
      ThreadLocal.withInitial(java.util.ArrayDeque::new);

  private byte[] stored = new byte[0];
  private byte[] decoded = new byte[0];
  private io.shale.engine.io.Readahead scanReadahead;

  /** Buffers from the calling thread's pool (or new ones); {@link #giveBack} when done. */
  static BlockReadBuffers borrow() {
    BlockReadBuffers b = POOL.get().pollFirst();
    return b != null ? b : new BlockReadBuffers();
  }

  /**
   * Return borrowed buffers to the calling thread's pool. Precondition: the borrower reads nothing
   * from them any more, and gives them back once.
   */
  void giveBack() {
    if (scanReadahead != null) {
      scanReadahead.restart(0); // its window goes back to the thread's scan windows
    }
    java.util.ArrayDeque<BlockReadBuffers> pool = POOL.get();
    if (pool.size() < POOL_MAX) {
      pool.addFirst(this);
    }
  }

  /** A scan's read-ahead from {@code initialBytes} to {@code maxBytes}, kept with these buffers. */
  io.shale.engine.io.Readahead scanReadahead(int initialBytes, int maxBytes) {
    if (scanReadahead == null) {
      scanReadahead =
          io.shale.engine.io.Readahead.adaptive(initialBytes, maxBytes, TableReader.SCAN_WINDOWS);
    }
    return scanReadahead;
  }

  /**
   * The calling thread's buffers, for a read that ends before the thread reads anything else with
   * them (a point lookup).
   */
  static BlockReadBuffers ofThread() {
    return PER_THREAD.get();
  }

  /** The calling thread's array of at least {@code bytes} for a block as it is stored. */
  static byte[] stored(int bytes) {
    BlockReadBuffers t = PER_THREAD.get();
    byte[] b = atLeast(t.stored, bytes);
    if (b.length <= KEEP_MAX_BYTES) {
      t.stored = b;
    }
    return b;
  }

  /** {@code current} if it holds {@code bytes}, else a new array of {@link #sizeFor} them. */
  private static byte[] atLeast(byte[] current, int bytes) {
    return current.length >= bytes ? current : new byte[sizeFor(bytes)];
  }

  /**
   * The length to allocate for {@code bytes}: the next power of two up to {@link #KEEP_MAX_BYTES}
   * (blocks vary in size around the block size, and growing an array by exactly each larger block
   * allocated it again and again), exactly {@code bytes} above.
   */
  static int sizeFor(int bytes) {
    if (bytes > KEEP_MAX_BYTES) {
      return bytes;
    }
    return Math.max(MIN_BYTES, Integer.highestOneBit(Math.max(1, bytes - 1)) << 1);
  }

  /** The smallest array allocated: a block of the default 4 KiB with its trailer fits. */
  static final int MIN_BYTES = 8 << 10;

  /** An array of at least {@code bytes} for decoded contents; the previous one is overwritten. */
  byte[] decoded(int bytes) {
    byte[] b = atLeast(decoded, bytes);
    if (b.length <= KEEP_MAX_BYTES) {
      decoded = b;
    }
    return b;
  }
}
