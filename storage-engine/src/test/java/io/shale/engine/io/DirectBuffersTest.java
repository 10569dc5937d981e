package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class DirectBuffersTest {
  @Test
  void aBufferIsDirectAndLimitedToTheRequest() {
    DirectBuffers buffers = new DirectBuffers(1 << 20);
    ByteBuffer b = buffers.take(100 << 10);
    assertThat(b.isDirect()).isTrue();
    assertThat(b.position()).isZero();
    assertThat(b.limit()).isEqualTo(100 << 10);
  }

  @Test
  void aSmallerRequestGetsTheSmallestKeptBufferLargeEnoughCleared() {
    DirectBuffers buffers = new DirectBuffers(4 << 20);
    ByteBuffer mid = buffers.take(256 << 10);
    ByteBuffer big = buffers.take(1 << 20);
    mid.position(1000);
    buffers.give(big);
    buffers.give(mid);
    ByteBuffer again = buffers.take(100 << 10);
    assertThat(again).isSameAs(mid);
    assertThat(again.position()).isZero();
    assertThat(again.limit()).isEqualTo(100 << 10);
    assertThat(buffers.take(100 << 10)).isSameAs(big);
    assertThat(buffers.take(100 << 10)).isNotSameAs(mid).isNotSameAs(big);
    assertThat(buffers.keptBytes()).isZero();
  }

  @Test
  void aLargerRequestNeverGetsASmallerBuffer() {
    DirectBuffers buffers = new DirectBuffers(1 << 20);
    ByteBuffer small = buffers.take(64 << 10);
    buffers.give(small);
    ByteBuffer large = buffers.take(128 << 10);
    assertThat(large).isNotSameAs(small);
    assertThat(large.capacity()).isEqualTo(128 << 10);
    assertThat(buffers.keptBytes()).isEqualTo(64 << 10);
  }

  @Test
  void aThreadKeepsAtMostItsBudgetDroppingTheOldestFirst() {
    DirectBuffers buffers = new DirectBuffers(256 << 10);
    ByteBuffer[] given = new ByteBuffer[5];
    for (int i = 0; i < given.length; i++) {
      given[i] = buffers.take(64 << 10);
    }
    for (ByteBuffer b : given) {
      buffers.give(b);
    }
    assertThat(buffers.keptBytes()).isEqualTo(256 << 10);
    for (int i = 0; i < 4; i++) {
      assertThat(buffers.take(64 << 10)).isNotSameAs(given[0]).isIn((Object[]) given);
    }
    assertThat(buffers.take(64 << 10)).isNotSameAs(given[0]);
  }

  @Test
  void anotherThreadHasItsOwnPool() throws Exception {
    DirectBuffers buffers = new DirectBuffers(1 << 20);
    buffers.give(buffers.take(64 << 10));
    long[] otherThreadKept = new long[1];
    Thread t = new Thread(() -> otherThreadKept[0] = buffers.keptBytes());
    t.start();
    t.join();
    assertThat(otherThreadKept[0]).isZero();
    assertThat(buffers.keptBytes()).isEqualTo(64 << 10);
  }

  /**
   * Buffers of equal contents are still different buffers (ByteBuffer.equals compares what
   * remains): taking one must remove that one from the pool, so that none is handed out twice.
   */
  @Test
  void equalBuffersAreNeverHandedOutTwice() {
    DirectBuffers buffers = new DirectBuffers(1 << 20);
    ByteBuffer small = buffers.take(64 << 10);
    ByteBuffer large = buffers.take(128 << 10);
    large.limit(64 << 10); // given back as used: the same 64 KiB of zeros remain in both
    buffers.give(small);
    buffers.give(large);
    assertThat(buffers.take(100 << 10)).isSameAs(large);
    assertThat(buffers.take(100 << 10)).as("the large buffer again").isNotSameAs(large);
    assertThat(buffers.take(64 << 10)).isSameAs(small);
  }
}
