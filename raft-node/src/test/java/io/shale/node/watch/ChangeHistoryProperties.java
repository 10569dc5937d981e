package io.shale.node.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.statemachine.KeyChange;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

/**
 * Whatever changes are applied, the history gives back exactly those it holds (every field of every
 * change, in order, under any filter), and holds the newest entries within its budget.
 */
class ChangeHistoryProperties {
  private static final KeyFilter ALL = new KeyFilter(new byte[0], null);

  /** An applied entry: {@code gap} indexes after the one before, with its changes. */
  record Step(int gap, List<KeyChange> changes) {}

  @Property(tries = 500)
  void everyChangeReadsBackAsItWasApplied(
      @ForAll("steps") List<Step> steps,
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long start,
      @ForAll byte prefix) {
    ChangeHistory h = new ChangeHistory(Long.MAX_VALUE);
    h.restartAfter(start);
    List<ChangeHistory.Event> applied = apply(h, start, steps);
    assertThat(describe(h.read(start + 1, ALL, Long.MAX_VALUE).events()))
        .containsExactlyElementsOf(describe(applied));
    KeyFilter filter = KeyFilter.prefix(new byte[] {prefix});
    assertThat(describe(h.read(start + 1, filter, Long.MAX_VALUE).events()))
        .containsExactlyElementsOf(
            describe(applied.stream().filter(e -> filter.accepts(e.change().key())).toList()));
    long last = applied.isEmpty() ? start : applied.get(applied.size() - 1).index();
    for (long from = start + 1; from <= last + 1; from++) {
      // From any index on: the changes of that index and later ones.
      long first = from;
      assertThat(describe(h.read(from, ALL, Long.MAX_VALUE).events()))
          .containsExactlyElementsOf(
              describe(applied.stream().filter(e -> e.index() >= first).toList()));
    }
  }

  @Property(tries = 500)
  void theNewestEntriesStayWithinTheBudget(
      @ForAll("steps") List<Step> steps, @ForAll @LongRange(min = 0, max = 4096) long budget) {
    ChangeHistory h = new ChangeHistory(budget);
    h.restartAfter(0);
    List<ChangeHistory.Event> applied = new ArrayList<>();
    long index = 0;
    for (Step s : steps) {
      index += s.gap();
      h.applied(index, s.changes());
      for (KeyChange c : s.changes()) {
        applied.add(new ChangeHistory.Event(index, c));
      }
      long oldest = h.oldestIndex();
      List<ChangeHistory.Event> held = h.read(oldest, ALL, Long.MAX_VALUE).events();
      assertThat(describe(held))
          .containsExactlyElementsOf(
              describe(applied.stream().filter(e -> e.index() >= oldest).toList()));
      if (!s.changes().isEmpty()) {
        assertThat(oldest).as("the newest entry stays").isLessThanOrEqualTo(index);
      }
      if (h.retainedBytes() > budget) {
        assertThat(held.stream().map(ChangeHistory.Event::index).distinct())
            .as("over the budget with the newest entry alone, or none under a tiny budget")
            .hasSizeLessThanOrEqualTo(1);
      }
      assertThat(h.read(oldest - 1, ALL, Long.MAX_VALUE)).isNull();
    }
  }

  private static List<ChangeHistory.Event> apply(ChangeHistory h, long start, List<Step> steps) {
    List<ChangeHistory.Event> applied = new ArrayList<>();
    long index = start;
    for (Step s : steps) {
      index += s.gap();
      h.applied(index, s.changes());
      for (KeyChange c : s.changes()) {
        applied.add(new ChangeHistory.Event(index, c));
      }
    }
    return applied;
  }

  /** Every field of each event, byte arrays by content. */
  private static List<String> describe(List<ChangeHistory.Event> events) {
    HexFormat hex = HexFormat.of();
    List<String> out = new ArrayList<>();
    for (ChangeHistory.Event e : events) {
      KeyChange c = e.change();
      KeyChange.Previous p = c.previous();
      out.add(
          e.index()
              + " "
              + hex.formatHex(c.key())
              + (c.value() == null ? " delete" : " = " + hex.formatHex(c.value()))
              + " created "
              + c.createIndex()
              + " version "
              + c.version()
              + (p == null
                  ? ""
                  : " previous "
                      + hex.formatHex(p.value())
                      + " "
                      + p.modIndex()
                      + " "
                      + p.createIndex()
                      + " "
                      + p.version()));
    }
    return out;
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<List<KeyChange>> changes = change().list().ofMaxSize(6);
    return Combinators.combine(Arbitraries.integers().between(1, 3), changes)
        .as(Step::new)
        .list()
        .ofMaxSize(30);
  }

  private static Arbitrary<KeyChange> change() {
    Arbitrary<KeyChange.Previous> previous =
        Combinators.combine(bytes(0, 300), revision(), revision(), revision())
            .as(KeyChange.Previous::new);
    return Combinators.combine(
            bytes(1, 20),
            bytes(0, 300).injectNull(0.3),
            revision(),
            revision(),
            previous.injectNull(0.5))
        .as(KeyChange::new);
  }

  private static Arbitrary<byte[]> bytes(int min, int max) {
    return Arbitraries.bytes().array(byte[].class).ofMinSize(min).ofMaxSize(max);
  }

  /** Indexes and versions: mostly near the entries' own, sometimes any long at all. */
  private static Arbitrary<Long> revision() {
    return Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.longs().between(0, 200)), Tuple.of(1, Arbitraries.longs()));
  }
}
