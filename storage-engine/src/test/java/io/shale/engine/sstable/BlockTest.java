package io.shale.engine.sstable;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.iterator.Direction;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
    byte[] data = bytes(restartInterval, n);
    return new Block(data, data.length, FILE, 4096);
  }

  private static byte[] bytes(int restartInterval, int n) {
    BlockBuilder bb = new BlockBuilder(restartInterval);
    for (int i = 0; i < n; i++) {
      byte[] v = ("value-" + i).getBytes(UTF_8);
      bb.add(key(i), Keys.trailer(1000 - i, ValueKind.VALUE), v, 0, v.length);
    }
    ByteSink s = bb.finish();
    return Arrays.copyOf(s.array(), s.size());
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
    byte[] data = bytes(16, 10);
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

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 16})
  void aBlockInNativeMemoryReadsAsOnTheHeap(int restartInterval) {
    byte[] data = bytes(restartInterval, 300);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment segment = arena.allocate(data.length);
      MemorySegment.copy(data, 0, segment, ValueLayout.JAVA_BYTE, 0, data.length);
      Block heap = new Block(data, data.length, FILE, 4096);
      Block offHeap = new Block(segment, FILE, 4096);
      for (Direction d : Direction.values()) {
        Block.Iter h = heap.iterator(d);
        Block.Iter o = offHeap.iterator(d);
        h.seekToFirst();
        o.seekToFirst();
        assertThat(keys(o)).hasSize(300).isEqualTo(keys(h));
      }
      Block.Iter it = offHeap.iterator(Direction.FORWARD);
      it.seek(key(150));
      assertThat(new String(it.value(), UTF_8)).isEqualTo("value-150");
      assertThat(it.valueSlice().copy()).isEqualTo(it.value());
    }
  }

  @Test
  void readingABlockAfterItsMemoryWasFreedThrowsInsteadOfReadingFreedMemory() {
    byte[] data = bytes(16, 100);
    Arena arena = Arena.ofShared();
    MemorySegment segment = arena.allocate(data.length);
    MemorySegment.copy(data, 0, segment, ValueLayout.JAVA_BYTE, 0, data.length);
    Block block = new Block(segment, FILE, 4096);
    arena.close();
    assertThatThrownBy(() -> block.iterator(Direction.FORWARD).seek(key(50)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void anIndexValueReadsAsABlockHandle() {
    BlockBuilder bb = new BlockBuilder(16);
    byte[] handle = new byte[15];
    int n = 0;
    n = putVarint(handle, n, 5_000_000_000L);
    n = putVarint(handle, n, 4096);
    bb.add(key(1), Keys.trailer(1, ValueKind.VALUE), handle, 0, n);
    ByteSink s = bb.finish();
    Block b = new Block(Arrays.copyOf(s.array(), s.size()), s.size(), FILE, 0);
    Block.Iter it = b.iterator(Direction.FORWARD);
    it.seekToFirst();
    assertThat(it.valueAsHandle()).isEqualTo(new BlockHandle(5_000_000_000L, 4096));
    bb = new BlockBuilder(16);
    bb.add(key(1), Keys.trailer(1, ValueKind.VALUE), new byte[] {(byte) 0x80}, 0, 1);
    s = bb.finish();
    Block.Iter bad =
        new Block(Arrays.copyOf(s.array(), s.size()), s.size(), FILE, 0)
            .iterator(Direction.FORWARD);
    bad.seekToFirst();
    assertThatThrownBy(bad::valueAsHandle)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("truncated varint");
  }

  private static int putVarint(byte[] b, int p, long v) {
    while ((v & ~0x7fL) != 0) {
      b[p++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    b[p++] = (byte) v;
    return p;
  }
}
