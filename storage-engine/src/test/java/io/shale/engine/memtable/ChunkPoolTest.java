package io.shale.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ChunkPoolTest {
  private static final long MEMTABLE = 1 << 20;

  /**
   * Take what one memtable fills: its size in chunks plus two (value chunk tails, the chunk of the
   * batch that crossed the seal threshold).
   */
  private static List<ChunkPool.Chunk> takeMemtable(ChunkPool pool) {
    int n = (int) (MEMTABLE / pool.chunkBytes()) + 2;
    List<ChunkPool.Chunk> chunks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      chunks.add(pool.take());
    }
    return chunks;
  }

  /**
   * After a burst filled every memtable the engine may hold, the pool keeps all their chunks, so
   * the next burst allocates none.
   */
  @Test
  void keepsEveryChunkOfAsManyMemtablesAsCanBeAlive() {
    int alive = 5;
    try (ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, alive)) {
      List<List<ChunkPool.Chunk>> burst = new ArrayList<>();
      for (int m = 0; m < alive; m++) {
        burst.add(takeMemtable(pool));
      }
      long allocated = pool.nativeBytes();
      burst.forEach(pool::give);
      assertThat(pool.pooledBytes()).isEqualTo(alive * (MEMTABLE + 2L * pool.chunkBytes()));
      assertThat(pool.nativeBytes()).as("nothing freed").isEqualTo(allocated);

      Set<MemorySegment> before = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
      burst.forEach(m -> m.forEach(c -> before.add(c.segment())));
      List<List<ChunkPool.Chunk>> again = new ArrayList<>();
      for (int m = 0; m < alive; m++) {
        again.add(takeMemtable(pool));
        again
            .getLast()
            .forEach(c -> assertThat(before).as("a recycled chunk").contains(c.segment()));
      }
      assertThat(pool.pooledBytes()).isZero();
      assertThat(pool.nativeBytes()).as("nothing allocated").isEqualTo(allocated);
      again.forEach(pool::give);
    }
  }

  @Test
  void chunksBeyondTheCapacityAreFreedAtOnce() {
    try (ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, 2)) {
      List<List<ChunkPool.Chunk>> taken =
          List.of(takeMemtable(pool), takeMemtable(pool), takeMemtable(pool));
      taken.forEach(pool::give);
      // Two memtables and three chunks each, of the three memtables and six chunks given.
      assertThat(pool.pooledBytes()).isEqualTo(2 * (MEMTABLE + 3L * pool.chunkBytes()));
      assertThat(pool.nativeBytes()).isEqualTo(pool.pooledBytes());
      MemorySegment freed = taken.get(2).getLast().segment();
      assertThat(freed.scope().isAlive())
          .as("the last chunk given was past the capacity")
          .isFalse();
      assertThatThrownBy(() -> freed.get(ValueLayout.JAVA_LONG, 0))
          .isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void oversizedRecordsAreNeverPooled() {
    try (ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, 2)) {
      ChunkPool.Chunk big = pool.takeOversized(3L * pool.chunkBytes());
      assertThat(pool.nativeBytes()).isEqualTo(3L * pool.chunkBytes());
      pool.give(List.of(big));
      assertThat(pool.pooledBytes()).isZero();
      assertThat(pool.nativeBytes()).isZero();
      assertThat(big.segment().scope().isAlive()).isFalse();
    }
  }

  /** Close frees what is pooled; chunks still lent are freed as they come back, none kept. */
  @Test
  void closeFreesThePoolAndEveryChunkGivenAfterIt() {
    ChunkPool pool = ChunkPool.forMemtables(MEMTABLE, 2);
    List<ChunkPool.Chunk> pooled = takeMemtable(pool);
    List<ChunkPool.Chunk> lent = takeMemtable(pool);
    pool.give(pooled);
    pool.close();
    assertThat(pool.liveChunks()).isEqualTo(lent.size());
    assertThat(lent.getFirst().segment().scope().isAlive()).as("lent chunks stay usable").isTrue();
    pool.give(lent);
    assertThat(pool.liveChunks()).isZero();
    assertThat(pool.nativeBytes()).isZero();
    assertThat(pool.pooledBytes()).isZero();
    assertThatThrownBy(pool::take).hasMessageContaining("engine is closed");
  }
}
