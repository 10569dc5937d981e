package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Scratch arrays grow in powers of two, so blocks of varying size reuse one array. */
class BlockReadBuffersTest {
  @Test
  void sizesArePowersOfTwoFromTheMinimumUpToTheKeepLimitThenExact() {
    assertThat(BlockReadBuffers.sizeFor(1)).isEqualTo(BlockReadBuffers.MIN_BYTES);
    assertThat(BlockReadBuffers.sizeFor(4096 + 5)).isEqualTo(8 << 10);
    assertThat(BlockReadBuffers.sizeFor(8 << 10)).isEqualTo(8 << 10);
    assertThat(BlockReadBuffers.sizeFor((8 << 10) + 1)).isEqualTo(16 << 10);
    assertThat(BlockReadBuffers.sizeFor(BlockReadBuffers.KEEP_MAX_BYTES))
        .isEqualTo(BlockReadBuffers.KEEP_MAX_BYTES);
    assertThat(BlockReadBuffers.sizeFor(BlockReadBuffers.KEEP_MAX_BYTES + 1))
        .isEqualTo(BlockReadBuffers.KEEP_MAX_BYTES + 1);
  }

  @Test
  void decodedBlocksOfVaryingSizeShareOneArray() {
    BlockReadBuffers b = new BlockReadBuffers();
    byte[] first = b.decoded(4200);
    assertThat(b.decoded(5000)).isSameAs(first);
    assertThat(b.decoded(8192)).isSameAs(first);
    byte[] larger = b.decoded(9000);
    assertThat(larger).isNotSameAs(first).hasSize(16 << 10);
    assertThat(b.decoded(100)).isSameAs(larger);
    // A huge block gets an array of its own that is not kept.
    byte[] huge = b.decoded(BlockReadBuffers.KEEP_MAX_BYTES + 10);
    assertThat(b.decoded(100)).isSameAs(larger).isNotSameAs(huge);
  }
}
