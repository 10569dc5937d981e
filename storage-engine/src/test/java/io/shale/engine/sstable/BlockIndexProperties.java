package io.shale.engine.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
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
 * The block index behaves as a map from (file, offset) to (position, length) under any sequence of
 * puts, removals and file evictions, across growth and backward-shift deletion. Few files and
 * offsets, so that keys collide, probe runs form and wrap around the table's end.
 */
class BlockIndexProperties {
  /** kind 0: put, 1: remove, 2: remove every block of a file. */
  record Op(int kind, long file, long offset, long position, int length) {}

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Op> op =
        Combinators.combine(
                Arbitraries.integers().between(0, 9),
                Arbitraries.longs().between(0, 5),
                Arbitraries.longs().between(0, 40).map(o -> o * 4096),
                Arbitraries.longs().between(0, 1L << 40),
                Arbitraries.integers().between(1, 1 << 16))
            .as((k, f, o, p, l) -> new Op(k < 6 ? 0 : k < 9 ? 1 : 2, f, o, p, l));
    return op.list().ofMaxSize(400);
  }

  private record Key(long file, long offset) {}

  private record Where(long position, int length) {}

  @Property(tries = 300)
  void behavesAsAMap(@ForAll("ops") List<Op> ops) {
    BlockIndex index = new BlockIndex(4);
    Map<Key, Where> model = new HashMap<>();
    for (Op op : ops) {
      Key k = new Key(op.file(), op.offset());
      switch (op.kind()) {
        case 0 -> {
          index.put(op.file(), op.offset(), op.position(), op.length());
          model.put(k, new Where(op.position(), op.length()));
        }
        case 1 -> {
          int slot = index.find(op.file(), op.offset());
          assertThat(slot >= 0).isEqualTo(model.containsKey(k));
          if (slot >= 0) {
            index.removeAt(slot);
            model.remove(k);
          }
        }
        default -> {
          long expected = 0;
          List<Key> gone = new ArrayList<>();
          for (Map.Entry<Key, Where> e : model.entrySet()) {
            if (e.getKey().file() == op.file()) {
              expected += e.getValue().length();
              gone.add(e.getKey());
            }
          }
          assertThat(index.removeFile(op.file())).isEqualTo(expected);
          gone.forEach(model::remove);
        }
      }
      assertThat(index.size()).isEqualTo(model.size());
      assertThat(index.size()).isLessThanOrEqualTo(index.slots() / 2);
    }
    for (long f = 0; f <= 5; f++) {
      for (long o = 0; o <= 40; o++) {
        Where w = model.get(new Key(f, o * 4096));
        int slot = index.find(f, o * 4096);
        if (w == null) {
          assertThat(slot).isEqualTo(-1);
        } else {
          assertThat(slot).isNotNegative();
          assertThat(index.position(slot)).isEqualTo(w.position());
          assertThat(index.length(slot)).isEqualTo(w.length());
          assertThat(index.file(slot)).isEqualTo(f);
        }
      }
    }
  }
}
