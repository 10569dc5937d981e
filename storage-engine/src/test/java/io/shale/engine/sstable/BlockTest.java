package io.shale.engine.sstable;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.iterator.Direction;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A block built by {@link BlockBuilder} reads back through {@link Block}, at any restart interval.
 */
class BlockTest {
  private static final Path FILE = Path.of("000042.sst");

  private static Block build(int restartInterval, int n) {
    BlockBuilder bb = new BlockBuilder(restartInterval);
    for (int i = 0; i < n; i++) {
      byte[] v = ("value-" + i).getBytes(UTF_8);
      bb.add(key(i), Keys.trailer(1000 - i, ValueKind.VALUE), v, 0, v.length);
    }
    ByteSink s = bb.finish();
    byte[] data = Arrays.copyOf(s.array(), s.size());
    return new Block(data, data.length, FILE, 4096);
  }

  private static byte[] key(int i) {
    return String.format("user-key-%05d", i * 2).getBytes(UTF_8);
  }

  private static List<String> keys(Block.Iter it) {
    List<String> out = new ArrayList<>();
    for (; it.valid; it.next()) {
      out.add(new String(it.userKey(), UTF_8));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 16, 1000})
  void everyEntryReadsBackInBothDirections(int restartInterval) {
    Block block = build(restartInterval, 100);
    Block.Iter f = block.iterator(Direction.FORWARD);
    f.seekToFirst();
    List<String> forward = keys(f);
    assertThat(forward).hasSize(100);
    assertThat(forward.get(0)).isEqualTo("user-key-00000");
    assertThat(forward.get(99)).isEqualTo("user-key-00198");
    Block.Iter r = block.iterator(Direction.REVERSE);
    r.seekToFirst();
    List<String> reverse = keys(r);
    java.util.Collections.reverse(reverse);
    assertThat(reverse).isEqualTo(forward);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 16})
  void seeksLandOnTheRightEntry(int restartInterval) {
    Block block = build(restartInterval, 50);
    Block.Iter f = block.iterator(Direction.FORWARD);
    f.seek("user-key-00031".getBytes(UTF_8)); // between 30 and 32
    assertThat(new String(f.userKey(), UTF_8)).isEqualTo("user-key-00032");
    assertThat(f.sequence()).isEqualTo(1000 - 16);
    assertThat(new String(f.value(), UTF_8)).isEqualTo("value-16");
    f.seek("user-key-99999".getBytes(UTF_8));
    assertThat(f.valid).isFalse();
    Block.Iter r = block.iterator(Direction.REVERSE);
    r.seek("user-key-00031".getBytes(UTF_8)); // last entry below the target
    assertThat(new String(r.userKey(), UTF_8)).isEqualTo("user-key-00030");
    r.seek("user-key-00000".getBytes(UTF_8));
    assertThat(r.valid).isFalse();
  }

  @Test
  void aDamagedRestartArrayIsCorruptionNamingFileAndOffset() {
    Block good = build(16, 10);
    byte[] data = Arrays.copyOf(good.iterator(Direction.FORWARD).blockData(), good.sizeBytes());
    // The last four bytes count the restarts: claim more than the block can hold.
    io.shale.engine.io.Varints.writeFixed32(data, data.length - 4, 1 << 20);
    assertThatThrownBy(() -> new Block(data, data.length, FILE, 4096))
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining("000042.sst")
        .hasMessageContaining("4096")
        .hasMessageContaining("restart count");
    assertThatThrownBy(() -> new Block(new byte[3], 3, FILE, 0))
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining("too short");
  }
}
