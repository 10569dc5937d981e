package io.shale.node.watch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.statemachine.KeyChange;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChangeHistoryTest {
  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static KeyChange put(String k, String v) {
    return new KeyChange(b(k), b(v), 1, 1);
  }

  private static final KeyFilter ALL = new KeyFilter(new byte[0], null);

  private static List<Long> indexes(ChangeHistory.Read r) {
    return r.events().stream().map(ChangeHistory.Event::index).toList();
  }

  @Test
  void readsWholeIndexesInOrderFromAnyHeldIndex() {
    ChangeHistory h = new ChangeHistory(1 << 20);
    h.restartAfter(4);
    h.applied(5, List.of(put("a", "1"), put("b", "1")));
    h.applied(6, List.of()); // an entry without user-key changes
    h.applied(7, List.of(new KeyChange(b("a"), null, 0, 0)));
    ChangeHistory.Read all = h.read(5, ALL, 1 << 20);
    assertThat(indexes(all)).containsExactly(5L, 5L, 7L);
    assertThat(all.throughIndex()).isEqualTo(7);
    assertThat(indexes(h.read(6, ALL, 1 << 20))).containsExactly(7L);
    ChangeHistory.Read later = h.read(8, ALL, 1 << 20);
    assertThat(later.events()).isEmpty();
    assertThat(later.throughIndex()).isEqualTo(7);
    assertThat(h.read(4, ALL, 1 << 20)).as("before the restart point").isNull();
  }

  @Test
  void aFilterKeepsItsKeysOnly() {
    ChangeHistory h = new ChangeHistory(1 << 20);
    h.restartAfter(0);
    h.applied(1, List.of(put("app/x", "1"), put("apq", "1"), put("app", "1")));
    ChangeHistory.Read r = h.read(1, KeyFilter.prefix(b("app/")), 1 << 20);
    assertThat(r.events())
        .extracting(e -> new String(e.change().key(), UTF_8))
        .containsExactly("app/x");
    assertThat(h.read(1, KeyFilter.key(b("app")), 1 << 20).events()).hasSize(1);
  }

  @Test
  void aResponseEndsAtAnIndexBoundaryPastItsBytes() {
    ChangeHistory h = new ChangeHistory(1 << 20);
    h.restartAfter(0);
    for (long i = 1; i <= 10; i++) {
      h.applied(i, List.of(put("k" + i, "x".repeat(100)), put("j" + i, "y".repeat(100))));
    }
    ChangeHistory.Read r = h.read(1, ALL, 450); // two indexes are 408 bytes, three 612
    assertThat(indexes(r)).containsExactly(1L, 1L, 2L, 2L);
    assertThat(r.throughIndex()).isEqualTo(2);
    ChangeHistory.Read one = h.read(3, ALL, 1); // at least one index, whatever the budget
    assertThat(indexes(one)).containsExactly(3L, 3L);
    assertThat(one.throughIndex()).isEqualTo(3);
  }

  @Test
  void theOldestIndexesGoFirstAndTheNewestAlwaysStays() {
    // A budget that holds two of these entries, not three.
    ChangeHistory probe = new ChangeHistory(Long.MAX_VALUE);
    probe.restartAfter(0);
    probe.applied(1, List.of(put("k", "v".repeat(99))));
    long one = probe.retainedBytes();
    probe.applied(2, List.of(put("k", "v".repeat(99))));
    long two = probe.retainedBytes();
    ChangeHistory h = new ChangeHistory(two + (two - one) / 2);
    h.restartAfter(0);
    for (long i = 1; i <= 5; i++) {
      h.applied(i, List.of(put("k", "v".repeat(99))));
    }
    assertThat(h.oldestIndex()).isEqualTo(4);
    assertThat(h.read(3, ALL, 1 << 20)).isNull();
    assertThat(indexes(h.read(4, ALL, 1 << 20))).containsExactly(4L, 5L);
    h.applied(6, List.of(put("big", "v".repeat(1000))));
    assertThat(h.oldestIndex()).isEqualTo(6);
    assertThat(indexes(h.read(6, ALL, 1 << 20))).containsExactly(6L);
  }

  @Test
  void theBudgetCountsEachHeldEntryAsOneArrayInARingOfReferences() {
    assertThat(ChangeHistory.arrayBytes(0, 1)).isEqualTo(16);
    assertThat(ChangeHistory.arrayBytes(1, 1)).isEqualTo(24);
    assertThat(ChangeHistory.arrayBytes(8, 1)).isEqualTo(24);
    assertThat(ChangeHistory.arrayBytes(9, 1)).isEqualTo(32);
    assertThat(ChangeHistory.arrayBytes(8, 4)).isEqualTo(48);
    ChangeHistory h = new ChangeHistory(1 << 20);
    h.restartAfter(0);
    long ring = h.retainedBytes();
    assertThat(ring).as("the empty ring of 8 references").isEqualTo(48);
    h.applied(1, List.of(put("key", "value")));
    // 8 bytes of index; flags, key length, 3, value length, 5, create index, version: 21 bytes.
    assertThat(h.retainedBytes()).isEqualTo(ring + ChangeHistory.arrayBytes(21, 1));
    h.applied(2, List.of());
    assertThat(h.retainedBytes()).as("an entry without changes").isEqualTo(ring + 40);
    for (long i = 3; i <= 1000; i++) {
      h.applied(i, List.of(put("key", "value")));
    }
    assertThat(h.retainedBytes())
        .as("999 entries in a ring of 1024")
        .isEqualTo(ChangeHistory.arrayBytes(1024, 4) + 999 * 40);
  }

  @Test
  void aRestartForgetsWhatCameBefore() {
    ChangeHistory h = new ChangeHistory(1 << 20);
    h.restartAfter(0);
    h.applied(1, List.of(put("a", "1")));
    h.restartAfter(100); // a snapshot installed at 100
    assertThat(h.oldestIndex()).isEqualTo(101);
    assertThat(h.retainedBytes()).isEqualTo(ChangeHistory.arrayBytes(8, 4));
    assertThat(h.read(1, ALL, 1 << 20)).isNull();
    h.applied(101, List.of(put("a", "2")));
    assertThat(indexes(h.read(101, ALL, 1 << 20))).containsExactly(101L);
  }

  @Test
  void keyFiltersOfPrefixesRunToTheFirstKeyPastThem() {
    assertThat(KeyFilter.prefix(new byte[] {'a', (byte) 0xff}).end()).containsExactly('b');
    assertThat(KeyFilter.prefix(new byte[] {(byte) 0xff}).end()).isNull();
    assertThat(KeyFilter.key(b("k")).accepts(b("k"))).isTrue();
    assertThat(KeyFilter.key(b("k")).accepts(b("k\0"))).isFalse();
  }
}
