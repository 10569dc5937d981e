package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The off-heap block cache: contents come back byte for byte, memory stays bounded, blocks in use
 * survive the ring's turns, per-file eviction, hit and miss counts.
 */
class BlockCacheTest {
  private static final Path FILE = Path.of("x.sst");

  /** A valid block of {@code bytes} whose contents are a function of {@code seed}. */
  private static byte[] block(int bytes, int seed) {
    byte[] data = new byte[bytes];
    for (int i = 0; i < bytes - 4; i++) {
      data[i] = (byte) (seed * 31 + i);
    }
    // One restart at offset 0, restart count 1: the smallest valid block trailer.
    io.shale.engine.io.Varints.writeFixed32(data, bytes - 4, 1);
    return data;
  }

  private static void put(BlockCache cache, long file, long offset, byte[] data) {
    cache.put(file, offset, data, data.length);
  }

  /** The cached contents, or null. */
  private static byte[] get(BlockCache cache, long file, long offset) {
    BlockReadBuffers buffers = new BlockReadBuffers();
    Block b = cache.get(file, offset, FILE, buffers);
    return b == null ? null : Arrays.copyOf(buffers.decoded(0), b.sizeBytes());
  }

  @Test
  void aHitReturnsTheBytesPutAndHitsAndMissesAreCounted() {
    BlockCache cache = new BlockCache(1 << 20);
    assertThat(get(cache, 1, 0)).isNull();
    byte[] b = block(4096, 7);
    put(cache, 1, 0, b);
    assertThat(get(cache, 1, 0)).isEqualTo(b);
    assertThat(get(cache, 1, 4096)).isNull();
    assertThat(cache.hits()).isEqualTo(1);
    assertThat(cache.misses()).isEqualTo(2);
  }

  @Test
  void theCacheKeepsACopyNotTheCallersArray() {
    BlockCache cache = new BlockCache(1 << 20);
    byte[] b = block(4096, 1);
    byte[] expected = b.clone();
    put(cache, 1, 0, b);
    Arrays.fill(b, (byte) 0);
    assertThat(get(cache, 1, 0)).isEqualTo(expected);
  }

  @Test
  void memoryStaysWithinCapacityAndEveryHitIsTheRightBlock() {
    long capacity = 256 << 10;
    BlockCache cache = new BlockCache(capacity);
    for (int i = 0; i < 2000; i++) {
      put(cache, i % 7, i * 4096L, block(4096, i));
      assertThat(cache.usedBytes()).isLessThanOrEqualTo(capacity);
    }
    assertThat(cache.usedBytes()).isGreaterThan(capacity / 2);
    int hits = 0;
    for (int i = 0; i < 2000; i++) {
      byte[] got = get(cache, i % 7, i * 4096L);
      if (got != null) {
        assertThat(got).isEqualTo(block(4096, i));
        hits++;
      }
    }
    assertThat(hits).isBetween((int) (capacity / 2 / 4096), (int) (capacity / 4096));
  }

  @Test
  void aBlockReadOftenSurvivesTurnsOfTheRing() {
    BlockCache cache = new BlockCache(256 << 10);
    byte[] hot = block(4096, -1);
    put(cache, 99, 0, hot);
    for (int i = 0; i < 5000; i++) {
      put(cache, 1, i * 4096L, block(4096, i)); // twenty turns of the ring
      if (i % 16 == 0) {
        assertThat(get(cache, 99, 0)).as("the hot block after %d others", i).isEqualTo(hot);
      }
    }
    assertThat(get(cache, 1, 0)).as("a block written once, long ago").isNull();
  }

  @Test
  void replacingABlockDoesNotCountItTwice() {
    BlockCache cache = new BlockCache(1 << 20);
    put(cache, 1, 0, block(4096, 1));
    long once = cache.usedBytes();
    put(cache, 1, 0, block(4096, 2));
    assertThat(cache.usedBytes()).isEqualTo(once);
    assertThat(get(cache, 1, 0)).isEqualTo(block(4096, 2));
  }

  @Test
  void aBlockLargerThanAChunkIsNotCachedAndDropsAnOlderCopy() {
    BlockCache cache = new BlockCache(1 << 20);
    put(cache, 1, 0, block(4096, 1));
    put(cache, 1, 0, block(1 << 20, 2));
    assertThat(get(cache, 1, 0)).isNull();
    assertThat(cache.usedBytes()).isZero();
  }

  @Test
  void evictingAFileDropsEveryBlockOfItAndOnlyThose() {
    BlockCache cache = new BlockCache(4 << 20);
    for (int i = 0; i < 64; i++) {
      put(cache, 5, i * 4096L, block(4096, i));
      put(cache, 6, i * 4096L, block(4096, i));
    }
    long before = cache.usedBytes();
    cache.evictFile(5);
    for (int i = 0; i < 64; i++) {
      assertThat(get(cache, 5, i * 4096L)).isNull();
      assertThat(get(cache, 6, i * 4096L)).isEqualTo(block(4096, i));
    }
    assertThat(cache.usedBytes()).isEqualTo(before / 2);
  }

  @Test
  void aCacheOfZeroBytesKeepsNothing() {
    BlockCache cache = new BlockCache(0);
    put(cache, 1, 0, block(4096, 1));
    assertThat(get(cache, 1, 0)).isNull();
    assertThat(cache.usedBytes()).isZero();
  }
}
