package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Under any sequence of puts (sizes up to larger than a chunk), gets and file evictions, a hit
 * returns exactly the bytes last put for that block, and the bytes the cache counts are those of
 * the blocks it indexes, never more than its capacity.
 */
class BlockCacheProperties {
  /** kind 0-5: put, 6-8: get, 9: evict the file. */
  record Op(int kind, long file, long offset, int length, int seed) {}

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Op> op =
        Combinators.combine(
                Arbitraries.integers().between(0, 9),
                Arbitraries.longs().between(1, 4),
                Arbitraries.longs().between(0, 30).map(o -> o * 4096),
                Arbitraries.integers().between(8, 40 << 10),
                Arbitraries.integers())
            .as(Op::new);
    return op.list().ofMaxSize(300);
  }

  private record Key(long file, long offset) {}

  private static byte[] block(int length, int seed) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (seed + i * 7);
    }
    io.shale.engine.io.Varints.writeFixed32(b, length - 4, 1); // a valid restart trailer
    return b;
  }

  @Property(tries = 200)
  void hitsAreTheLastBytesPutAndMemoryIsAccounted(@ForAll("ops") List<Op> ops) {
    long capacity = 256 << 10; // one shard of eight 32 KiB chunks: blocks over 32 KiB are refused
    BlockCache cache = new BlockCache(capacity);
    Map<Key, byte[]> lastPut = new HashMap<>();
    BlockReadBuffers buffers = new BlockReadBuffers();
    for (Op op : ops) {
      Key k = new Key(op.file(), op.offset());
      if (op.kind() < 6) {
        byte[] b = block(op.length(), op.seed());
        cache.put(op.file(), op.offset(), b, b.length);
        lastPut.put(k, b);
      } else if (op.kind() < 9) {
        Block got = cache.get(op.file(), op.offset(), Path.of("t.sst"), buffers);
        if (got != null) {
          assertThat(lastPut).containsKey(k);
          assertThat(Arrays.copyOf(buffers.decoded(0), got.sizeBytes())).isEqualTo(lastPut.get(k));
        }
      } else {
        cache.evictFile(op.file());
        lastPut.keySet().removeIf(key -> key.file() == op.file());
      }
      assertThat(cache.usedBytes()).isEqualTo(cache.indexedBytes()).isLessThanOrEqualTo(capacity);
    }
  }
}
