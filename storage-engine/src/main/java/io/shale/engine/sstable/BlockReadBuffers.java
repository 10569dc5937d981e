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
 * <p>Arrays above {@link #KEEP_MAX_BYTES} are not kept: a rare huge block should not pin its array
 * in every thread. Not thread-safe: one instance per reader.
 */
final class BlockReadBuffers {
  static final int KEEP_MAX_BYTES = 256 << 10;

  private static final ThreadLocal<BlockReadBuffers> PER_THREAD =
      ThreadLocal.withInitial(BlockReadBuffers::new);

  private byte[] stored = new byte[0];
  private byte[] decoded = new byte[0];

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
    if (t.stored.length >= bytes) {
      return t.stored;
    }
    byte[] b = new byte[bytes];
    if (bytes <= KEEP_MAX_BYTES) {
      t.stored = b;
    }
    return b;
  }

  /** An array of at least {@code bytes} for decoded contents; the previous one is overwritten. */
  byte[] decoded(int bytes) {
    if (decoded.length >= bytes) {
      return decoded;
    }
    byte[] b = new byte[bytes];
    if (bytes <= KEEP_MAX_BYTES) {
      decoded = b;
    }
    return b;
  }
}
