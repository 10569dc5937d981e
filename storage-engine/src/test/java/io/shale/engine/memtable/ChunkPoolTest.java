package io.shale.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.IdentityHashMap;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ChunkPoolTest {
  private static final long MEMTABLE = 1 << 20;

  /**
   * Take what one memtable fills: its size in chunks plus two (value chunk tails, the chunk of the
   * batch that crossed the seal threshold), byte and long chunks alternating.
   */
  private static Object[] takeMemtable(ChunkPool pool) {
    int n = (int) (MEMTABLE / pool.chunkBytes()) + 2;
    Object[] chunks = new Object[n];
    for (int i = 0; i < n; i++) {
      chunks[i] = i % 2 == 0 ? pool.takeBytes() : pool.takeLongs();
    }
    return chunks;
  }

  private static void give(ChunkPool pool, Object[] chunks) {
    byte[][] bytes = new byte[chunks.length][];
    long[][] longs = new long[chunks.length][];
    int b = 0;
    int l = 0;
    for (Object c : chunks) {
      if (c instanceof byte[] a) {
        bytes[b++] = a;
      } else {
        longs[l++] = (long[]) c;
      }
    }
    pool.give(bytes, b, longs, l);
  }

  /**
   * After a burst filled every memtable the engine may hold, the pool keeps all their chunks, so
   * the next burst allocates none.
   */
  @Test
  void keepsEveryChunkOfAsManyMemtablesAsCanBeAlive() {
    int alive = 5;
    ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, alive);
    Object[][] burst = new Object[alive][];
    for (int m = 0; m < alive; m++) {
      burst[m] = takeMemtable(pool);
    }
    for (Object[] m : burst) {
      give(pool, m);
    }
    assertThat(pool.pooledBytes()).isEqualTo(alive * (MEMTABLE + 2L * pool.chunkBytes()));

    Set<Object> before = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    for (Object[] m : burst) {
      before.addAll(java.util.Arrays.asList(m));
    }
    for (int m = 0; m < alive; m++) {
      for (Object c : takeMemtable(pool)) {
        assertThat(before).as("a recycled chunk").contains(c);
      }
    }
    assertThat(pool.pooledBytes()).isZero();
  }

  @Test
  void chunksBeyondTheCapacityAreLeftToTheCollector() {
    ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, 2);
    Object[][] taken = {takeMemtable(pool), takeMemtable(pool), takeMemtable(pool)};
    for (Object[] m : taken) {
      give(pool, m);
    }
    // Two memtables and three chunks each, of the three memtables and six chunks given.
    assertThat(pool.pooledBytes()).isEqualTo(2 * (MEMTABLE + 3L * pool.chunkBytes()));
  }
}
