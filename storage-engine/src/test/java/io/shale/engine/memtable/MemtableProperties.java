package io.shale.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.InternalKey;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The memtable against a model (a sorted map of internal keys): whatever is added, including the
 * same key and sequence twice and values larger than an arena chunk, every get, seek and walk in
 * both directions answers what the model does.
 */
class MemtableProperties {
  private static final int CHUNK_BYTES = 4 << 10;

  record Put(byte[] key, long sequence, ValueKind kind, byte[] value) {}

  @Provide
  Arbitrary<List<Put>> puts() {
    // Few keys and few sequences, so that versions of a key and repeated entries are common.
    Arbitrary<byte[]> keys = keys();
    Arbitrary<Long> sequences = Arbitraries.longs().between(1, 20);
    Arbitrary<ValueKind> kinds = Arbitraries.of(ValueKind.VALUE, ValueKind.TOMBSTONE);
    Arbitrary<byte[]> values =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(
                60, Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(40)),
            net.jqwik.api.Tuple.of(
                1,
                Arbitraries.integers()
                    .between(CHUNK_BYTES - 8, CHUNK_BYTES + 8)
                    .map(n -> new byte[n])));
    return Combinators.combine(keys, sequences, kinds, values)
        .as((k, s, kind, v) -> new Put(k, s, kind, kind == ValueKind.TOMBSTONE ? new byte[0] : v))
        .list()
        .ofMaxSize(120);
  }

  @Property(tries = 200)
  void everyReadAnswersAsTheModel(
      @ForAll("puts") List<Put> puts,
      @ForAll("probes") byte[] probe,
      @ForAll("readSequences") long readSequence) {
    // The memtable under test fills chunks another memtable used and gave back, so any byte or
    // link it fails to write would show as stale data from the first one.
    ChunkPool pool = new ChunkPool(CHUNK_BYTES, 1L << 30);
    Memtable previous = new Memtable(0, pool);
    for (Put p : puts) {
      byte[] junk = p.value().clone();
      java.util.Arrays.fill(junk, (byte) 0x5A);
      previous.add(p.key(), p.sequence() + 1, ValueKind.VALUE, junk);
    }
    previous.release();
    Memtable m = new Memtable(1, pool);
    TreeMap<InternalKey, StoredValue> model = new TreeMap<>();
    for (Put p : puts) {
      m.add(p.key(), p.sequence(), p.kind(), p.value());
      model.put(
          new InternalKey(p.key(), p.sequence()),
          new StoredValue(p.kind(), p.value(), p.sequence()));
    }
    assertThat(m.entryCount()).isEqualTo(model.size());
    assertThat(m.isEmpty()).isEqualTo(model.isEmpty());

    assertThat(walk(m.iterator(Direction.FORWARD), null)).isEqualTo(render(model.entrySet()));
    assertThat(walk(m.iterator(Direction.REVERSE), null))
        .isEqualTo(render(model.descendingMap().entrySet()));
    assertThat(walk(m.iterator(Direction.FORWARD), probe))
        .isEqualTo(render(model.tailMap(InternalKey.first(probe), true).entrySet()));
    assertThat(walk(m.iterator(Direction.REVERSE), probe))
        .isEqualTo(
            render(model.headMap(InternalKey.first(probe), false).descendingMap().entrySet()));

    Map.Entry<InternalKey, StoredValue> e = model.ceilingEntry(InternalKey.at(probe, readSequence));
    StoredValue expected =
        e == null || !java.util.Arrays.equals(e.getKey().userKey(), probe) ? null : e.getValue();
    StoredValue got = m.get(probe, readSequence);
    if (expected == null) {
      assertThat(got).isNull();
    } else {
      assertThat(got).isNotNull();
      assertThat(got.kind()).isEqualTo(expected.kind());
      assertThat(got.sequence()).isEqualTo(expected.sequence());
      assertThat(got.value()).isEqualTo(expected.value());
    }
    m.release();
    pool.close();
    assertThat(pool.liveChunks()).as("chunks not freed").isZero();
    assertThat(pool.nativeBytes()).isZero();
  }

  @Provide
  Arbitrary<byte[]> probes() {
    return keys();
  }

  /**
   * Short keys of any bytes, and keys of up to three words from a small alphabet with zeros, so
   * that keys share prefixes across words and differ only in length or in trailing zeros.
   */
  private static Arbitrary<byte[]> keys() {
    return Arbitraries.oneOf(
        Arbitraries.bytes().array(byte[].class).ofMaxSize(3),
        Arbitraries.of((byte) 0, (byte) 1, (byte) -1).array(byte[].class).ofMaxSize(20));
  }

  @Provide
  Arbitrary<Long> readSequences() {
    return Arbitraries.longs().between(0, 22);
  }

  private static List<String> render(Iterable<Map.Entry<InternalKey, StoredValue>> entries) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<InternalKey, StoredValue> e : entries) {
      out.add(
          line(
              e.getKey().userKey(),
              e.getKey().sequence(),
              e.getValue().kind(),
              e.getValue().value()));
    }
    return out;
  }

  private static List<String> walk(InternalIterator it, byte[] seek) {
    List<String> out = new ArrayList<>();
    if (seek == null) {
      it.seekToFirst();
    } else {
      it.seek(seek);
    }
    for (; it.valid(); it.next()) {
      out.add(line(it.userKey(), it.sequence(), it.kind(), it.value()));
    }
    it.close();
    return out;
  }

  private static String line(byte[] key, long sequence, ValueKind kind, byte[] value) {
    return java.util.HexFormat.of().formatHex(key)
        + "@"
        + sequence
        + " "
        + kind
        + " "
        + value.length
        + ":"
        + java.util.Arrays.hashCode(value);
  }
}
