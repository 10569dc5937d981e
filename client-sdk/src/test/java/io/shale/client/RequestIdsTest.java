package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RequestIdsTest {
  @Test
  void idsOfOneWriterSortInTheOrderTakenAndNeverRepeat() {
    RequestIds ids = RequestIds.create();
    List<byte[]> taken = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      taken.add(ids.next());
    }
    Set<ByteBuffer> distinct = new HashSet<>();
    for (int i = 0; i < taken.size(); i++) {
      assertThat(taken.get(i)).hasSize(RequestIds.LENGTH);
      assertThat(distinct.add(ByteBuffer.wrap(taken.get(i)))).isTrue();
      if (i > 0) {
        assertThat(Arrays.compareUnsigned(taken.get(i - 1), taken.get(i)))
            .as("id %d sorts after id %d", i, i - 1)
            .isNegative();
        assertThat(Arrays.copyOf(taken.get(i), 8)).isEqualTo(Arrays.copyOf(taken.get(0), 8));
      }
    }
  }

  @Test
  void writersGetTheirOwnPrefixAndATaggedWriterKeepsItsTag() {
    byte[] a = RequestIds.create().next();
    byte[] b = RequestIds.create().next();
    assertThat(Arrays.copyOf(a, 8)).isNotEqualTo(Arrays.copyOf(b, 8));
    RequestIds server = RequestIds.tagged((byte) 's');
    for (int i = 0; i < 100; i++) {
      assertThat(server.next()[0]).isEqualTo((byte) 's');
    }
  }

  @Test
  void idsTakenConcurrentlyAreDistinct() {
    RequestIds ids = RequestIds.create();
    Set<ByteBuffer> seen = ConcurrentHashMap.newKeySet();
    IntStream.range(0, 20_000).parallel().forEach(i -> seen.add(ByteBuffer.wrap(ids.next())));
    assertThat(seen).hasSize(20_000);
  }
}
