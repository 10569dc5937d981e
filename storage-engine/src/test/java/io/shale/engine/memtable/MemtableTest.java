package io.shale.engine.memtable;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemtableTest {
  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void aReadSeesTheNewestVersionAtOrBelowItsSequence() {
    Memtable m = new Memtable(1);
    m.add(b("k"), 3, ValueKind.VALUE, b("v3"));
    m.add(b("k"), 7, ValueKind.VALUE, b("v7"));
    m.add(b("k"), 9, ValueKind.TOMBSTONE, new byte[0]);
    assertThat(m.get(b("k"), 2)).isNull();
    assertThat(m.get(b("k"), 3).value()).isEqualTo(b("v3"));
    assertThat(m.get(b("k"), 8).value()).isEqualTo(b("v7"));
    StoredValue deleted = m.get(b("k"), 9);
    assertThat(deleted).isNotNull(); // a tombstone is an answer, unlike absence
    assertThat(deleted.isTombstone()).isTrue();
    assertThat(m.get(b("other"), 100)).isNull();
  }

  @Test
  void theLargestSequenceFollowsWritesAndAppliedBatchesThatWroteNothing() {
    Memtable m = new Memtable(1);
    assertThat(m.largestSequence()).isEqualTo(-1);
    assertThat(m.isEmpty()).isTrue();
    m.add(b("a"), 5, ValueKind.VALUE, b("x"));
    m.markApplied(8);
    m.markApplied(6);
    assertThat(m.largestSequence()).isEqualTo(8);
    assertThat(m.entryCount()).isEqualTo(1);
    assertThat(m.isEmpty()).isFalse();
  }

  @Test
  void approximateBytesGrowWithKeysAndValues() {
    Memtable m = new Memtable(1);
    long empty = m.approximateBytes();
    m.add(b("key"), 1, ValueKind.VALUE, new byte[1000]);
    long one = m.approximateBytes();
    assertThat(one - empty).isGreaterThanOrEqualTo(1003);
    m.add(b("key"), 2, ValueKind.VALUE, new byte[10]);
    assertThat(m.approximateBytes() - one).isGreaterThanOrEqualTo(13).isLessThan(1000);
  }

  @Test
  void iteratorsWalkInternalKeyOrderBothWaysAndSeek() {
    Memtable m = new Memtable(1);
    m.add(b("b"), 2, ValueKind.VALUE, b("b2"));
    m.add(b("a"), 1, ValueKind.VALUE, b("a1"));
    m.add(b("b"), 4, ValueKind.TOMBSTONE, new byte[0]);
    m.add(b("c"), 3, ValueKind.VALUE, b("c3"));
    assertThat(walk(m.iterator(Direction.FORWARD), null))
        .containsExactly("a.1", "b.4", "b.2", "c.3");
    assertThat(walk(m.iterator(Direction.FORWARD), b("b"))).containsExactly("b.4", "b.2", "c.3");
    assertThat(walk(m.iterator(Direction.REVERSE), null))
        .containsExactly("c.3", "b.2", "b.4", "a.1");
    // Reverse seek: the last entries with a user key below the target.
    assertThat(walk(m.iterator(Direction.REVERSE), b("c"))).containsExactly("b.2", "b.4", "a.1");
  }

  private static List<String> walk(InternalIterator it, byte[] seek) {
    List<String> out = new ArrayList<>();
    if (seek == null) {
      it.seekToFirst();
    } else {
      it.seek(seek);
    }
    for (; it.valid(); it.next()) {
      out.add(new String(it.userKey(), UTF_8) + "." + it.sequence());
    }
    it.close();
    return out;
  }
}
