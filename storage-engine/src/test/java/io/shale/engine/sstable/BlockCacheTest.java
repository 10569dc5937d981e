package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The block cache: bounded memory, hit and miss counts, per-file eviction. */
class BlockCacheTest {
  private static Block block(int bytes) {
    byte[] data = new byte[bytes];
    // One restart at offset 0, restart count 1: the smallest valid block trailer.
    io.shale.engine.io.Varints.writeFixed32(data, bytes - 4, 1);
    return new Block(data, bytes, Path.of("x.sst"), 0);
  }

  @Test
  void hitsAndMissesAreCounted() {
    BlockCache cache = new BlockCache(1 << 20);
    assertThat(cache.get(1, 0)).isNull();
    Block b = block(4096);
    cache.put(1, 0, b);
    assertThat(cache.get(1, 0)).isSameAs(b);
    assertThat(cache.get(1, 4096)).isNull();
    assertThat(cache.hits()).isEqualTo(1);
    assertThat(cache.misses()).isEqualTo(2);
  }

  @Test
  void memoryStaysWithinCapacityHoweverManyBlocksArrive() {
    long capacity = 256 << 10;
    BlockCache cache = new BlockCache(capacity);
    for (int i = 0; i < 2000; i++) {
      cache.put(i % 7, i * 4096L, block(4096));
      assertThat(cache.usedBytes()).isLessThanOrEqualTo(capacity);
    }
    assertThat(cache.usedBytes()).isGreaterThan(capacity / 2);
  }

  @Test
  void replacingABlockDoesNotCountItTwice() {
    BlockCache cache = new BlockCache(1 << 20);
    cache.put(1, 0, block(4096));
    long once = cache.usedBytes();
    cache.put(1, 0, block(4096));
    assertThat(cache.usedBytes()).isEqualTo(once);
  }

  @Test
  void evictingAFileDropsEveryBlockOfItAndOnlyThose() {
    BlockCache cache = new BlockCache(4 << 20);
    for (int i = 0; i < 64; i++) {
      cache.put(5, i * 4096L, block(4096));
      cache.put(6, i * 4096L, block(4096));
    }
    long before = cache.usedBytes();
    cache.evictFile(5);
    for (int i = 0; i < 64; i++) {
      assertThat(cache.get(5, i * 4096L)).isNull();
      assertThat(cache.get(6, i * 4096L)).isNotNull();
    }
    assertThat(cache.usedBytes()).isLessThan(before).isGreaterThan(before / 3);
  }

  @Test
  void aCacheOfZeroBytesKeepsNothing() {
    BlockCache cache = new BlockCache(0);
    cache.put(1, 0, block(4096));
    assertThat(cache.get(1, 0)).isNull();
    assertThat(cache.usedBytes()).isZero();
  }
}
