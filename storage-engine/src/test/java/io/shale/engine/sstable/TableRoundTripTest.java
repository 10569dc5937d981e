package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A table written by {@link TableBuilder} reads back through {@link TableReader} exactly: full
 * iteration both ways, seeks both ways at random targets, point gets, properties.
 */
class TableRoundTripTest {
  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(Compression.class)
  void writesAndReadsBack(Compression compression) throws IOException {
    Random rnd = new Random(compression.ordinal());
    TreeMap<byte[], byte[]> model = new TreeMap<>(Keys.USER_ORDER);
    for (int i = 0; i < 3000; i++) {
      byte[] k =
          String.format("key-%06d%s", rnd.nextInt(100_000), "z".repeat(rnd.nextInt(4)))
              .getBytes(StandardCharsets.UTF_8);
      byte[] v = rnd.nextInt(6) == 0 ? null : new byte[rnd.nextInt(300)];
      if (v != null) {
        rnd.nextBytes(v);
      }
      model.put(k, v);
    }
    Path file = dir.resolve("000001.sst");
    TableBuilder b = new TableBuilder(file, new TableWriteOptions(1024, 8, compression), 1, 14);
    long tombstones = 0;
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      boolean del = e.getValue() == null;
      tombstones += del ? 1 : 0;
      b.add(
          e.getKey(),
          7,
          del ? ValueKind.TOMBSTONE : ValueKind.VALUE,
          del ? new byte[0] : e.getValue());
    }
    TableProperties props = b.finish();
    assertThat(props.entries()).isEqualTo(model.size());
    assertThat(props.tombstones()).isEqualTo(tombstones);
    assertThat(props.level()).isEqualTo(1);
    assertThat(props.bloomBitsPerKey()).isEqualTo(14);
    assertThat(props.smallestKey()).isEqualTo(model.firstKey());
    assertThat(props.largestKey()).isEqualTo(model.lastKey());
    assertThat(props.dataBlocks()).isGreaterThan(50);

    TableReader r = TableReader.open(file, 1, new BlockCache(1 << 20));
    try {
      assertThat(r.properties().entries()).isEqualTo(props.entries());
      assertThat(keys(r.iterator(Direction.FORWARD), null))
          .containsExactlyElementsOf(render(model.keySet()));
      List<String> reversed = render(model.descendingKeySet());
      assertThat(keys(r.iterator(Direction.REVERSE), null)).containsExactlyElementsOf(reversed);
      for (int i = 0; i < 300; i++) {
        byte[] target =
            String.format("key-%06d", rnd.nextInt(110_000)).getBytes(StandardCharsets.UTF_8);
        assertThat(keys(r.iterator(Direction.FORWARD), target))
            .as("forward seek")
            .containsExactlyElementsOf(render(model.tailMap(target, true).keySet()));
        assertThat(keys(r.iterator(Direction.REVERSE), target))
            .as("reverse seek")
            .containsExactlyElementsOf(render(model.headMap(target, false).descendingKeySet()));
        StoredValue got = r.get(target, 7);
        if (!model.containsKey(target)) {
          assertThat(got).isNull();
        }
      }
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        StoredValue got = r.get(e.getKey(), 7);
        assertThat(got.isTombstone()).isEqualTo(e.getValue() == null);
        if (e.getValue() != null) {
          assertThat(got.value()).isEqualTo(e.getValue());
        }
        assertThat(r.get(e.getKey(), 6)).as("invisible below its sequence").isNull();
        assertThat(r.mayContain(e.getKey())).isTrue();
      }
      assertThat(r.verifyAllBlocks()).isEqualTo(props.dataBlocks());
    } finally {
      r.release();
    }
  }

  private static List<String> keys(InternalIterator it, byte[] seek) {
    List<String> out = new ArrayList<>();
    if (seek == null) {
      it.seekToFirst();
    } else {
      it.seek(seek);
    }
    for (; it.valid(); it.next()) {
      out.add(new String(it.userKey(), StandardCharsets.UTF_8));
    }
    return out;
  }

  private static List<String> render(Iterable<byte[]> keys) {
    List<String> out = new ArrayList<>();
    keys.forEach(k -> out.add(new String(k, StandardCharsets.UTF_8)));
    return out;
  }
}
