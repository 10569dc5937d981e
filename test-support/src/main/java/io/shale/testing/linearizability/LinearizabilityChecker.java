package io.shale.testing.linearizability;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides whether a history of register operations is linearizable: whether each operation can be
 * given one instant between its call and its return such that, in that order, every operation is
 * legal for a single register ({@link RegisterModel}).
 *
 * <p>The search is Wing and Gong's, with Lowe's memoization (as in Porcupine and Knossos): walk the
 * calls and returns in time order; at a call, try to linearize that operation now (remove it and
 * its return from the list, push it); at a return whose operation is not linearized yet, backtrack.
 * A (set of linearized operations, register state) pair already explored is never explored again,
 * which is what makes it fast enough for thousands of operations. Keys are independent registers,
 * so a history is checked key by key.
 *
 * <p>Operations with an unknown outcome return at "infinity": they may take effect at any point
 * after their call, or never (being linearized last, where nothing observes them).
 */
public final class LinearizabilityChecker {
  private LinearizabilityChecker() {}

  /**
   * The verdict on one key, or on a whole history (the first key that failed). {@code decided} is
   * false when the search gave up ({@link #MAX_STATES}): then {@code linearizable} is false too,
   * but nothing was shown to be wrong.
   */
  public record Result(
      boolean linearizable, boolean decided, String key, int operations, String explanation) {
    static Result ok(String key, int operations) {
      return new Result(true, true, key, operations, "linearizable");
    }
  }

  /**
   * Distinct (linearized set, state) pairs explored per key before the search gives up: a bound on
   * memory (each pair holds a bit set of the key's operations). Histories with many operations of
   * unknown outcome on one key can need exponentially many.
   */
  public static final int MAX_STATES = 2_000_000;

  /** Checks every key of {@code history}; the first non-linearizable key's result, else ok. */
  public static Result check(List<Operation> history) {
    return check(history, MAX_STATES);
  }

  /** As {@link #check(List)}, giving up on a key after {@code maxStates} explored states. */
  public static Result check(List<Operation> history, int maxStates) {
    Map<String, List<Operation>> byKey = new LinkedHashMap<>();
    for (Operation op : history) {
      byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
    }
    for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
      Result r = checkKey(e.getKey(), e.getValue(), maxStates);
      if (!r.linearizable()) {
        return r;
      }
    }
    return Result.ok("*", history.size());
  }

  /** One call or return in the time-ordered, doubly linked list the search walks. */
  private static final class Event {
    final Operation op;
    final int index; // the operation's position in the key's list
    final boolean call;
    Event match; // a call's return, a return's call
    Event prev;
    Event next;

    Event(Operation op, int index, boolean call) {
      this.op = op;
      this.index = index;
      this.call = call;
    }
  }

  private record Memo(BitSet linearized, int state) {}

  private record Frame(Event call, int stateBefore) {}

  static Result checkKey(String key, List<Operation> ops, int maxStates) {
    // Reads with an unknown outcome constrain nothing.
    List<Operation> kept =
        ops.stream().filter(o -> !(o.kind() == Operation.Kind.READ && o.indeterminate())).toList();
    Map<String, Integer> ids = new HashMap<>();
    int n = kept.size();
    int[] input = new int[n];
    int[] expected = new int[n];
    int[] output = new int[n];
    List<Event> events = new ArrayList<>(2 * n);
    for (int i = 0; i < n; i++) {
      Operation op = kept.get(i);
      input[i] = intern(ids, op.input());
      expected[i] = intern(ids, op.expected());
      output[i] = intern(ids, op.output());
      Event c = new Event(op, i, true);
      Event r = new Event(op, i, false);
      c.match = r;
      r.match = c;
      events.add(c);
      events.add(r);
    }
    // By time; at equal times calls first (the operations then overlap: the permissive reading).
    events.sort(
        Comparator.comparingLong((Event e) -> e.call ? e.op.called() : e.op.returned())
            .thenComparing(e -> e.call ? 0 : 1));
    Event head = new Event(null, -1, false);
    Event last = head;
    for (Event e : events) {
      last.next = e;
      e.prev = last;
      last = e;
    }

    int state = 0;
    BitSet linearized = new BitSet(n);
    Set<Memo> explored = new HashSet<>();
    Deque<Frame> stack = new ArrayDeque<>();
    int deepest = 0;
    List<Operation> deepestOrder = List.of();
    Event entry = head.next;
    while (head.next != null) {
      if (entry.call) {
        int i = entry.index;
        int next = RegisterModel.step(state, entry.op, input[i], expected[i], output[i]);
        if (next != RegisterModel.INVALID) {
          BitSet with = (BitSet) linearized.clone();
          with.set(i);
          if (explored.size() >= maxStates) {
            return new Result(
                false,
                false,
                key,
                n,
                "key "
                    + key
                    + ": undecided, the search "
                    + "explored "
                    + maxStates
                    + " states without an answer ("
                    + n
                    + " operations, "
                    + kept.stream().filter(Operation::indeterminate).count()
                    + " of unknown "
                    + "outcome); check shorter histories");
          }
          if (explored.add(new Memo(with, next))) {
            stack.push(new Frame(entry, state));
            state = next;
            linearized = with;
            lift(entry);
            if (stack.size() > deepest) {
              deepest = stack.size();
              List<Operation> order = new ArrayList<>(stack.size());
              stack.descendingIterator().forEachRemaining(f -> order.add(f.call().op));
              deepestOrder = order;
            }
            entry = head.next;
            continue;
          }
        }
        entry = entry.next;
      } else {
        // A return of an operation not linearized yet: this path is dead, undo the last choice.
        if (stack.isEmpty()) {
          return new Result(false, true, key, n, explain(key, kept, deepestOrder, entry.op));
        }
        Frame f = stack.pop();
        state = f.stateBefore();
        linearized = (BitSet) linearized.clone();
        linearized.clear(f.call().index);
        unlift(f.call());
        entry = f.call().next;
      }
    }
    return Result.ok(key, n);
  }

  private static int intern(Map<String, Integer> ids, String value) {
    return value == null ? 0 : ids.computeIfAbsent(value, v -> ids.size() + 1);
  }

  /** Takes an operation's call and return out of the list. */
  private static void lift(Event call) {
    call.prev.next = call.next;
    if (call.next != null) {
      call.next.prev = call.prev;
    }
    Event ret = call.match;
    ret.prev.next = ret.next;
    if (ret.next != null) {
      ret.next.prev = ret.prev;
    }
  }

  /** Puts them back (in the reverse order of {@link #lift}, so the links are restored). */
  private static void unlift(Event call) {
    Event ret = call.match;
    ret.prev.next = ret;
    if (ret.next != null) {
      ret.next.prev = ret;
    }
    call.prev.next = call;
    if (call.next != null) {
      call.next.prev = call;
    }
  }

  /**
   * What a person needs to see: the longest order found that is legal, and the operations that
   * could not follow it (among them, the one whose return ended every attempt).
   */
  private static String explain(
      String key, List<Operation> ops, List<Operation> order, Operation blocking) {
    StringBuilder s = new StringBuilder();
    s.append("key ")
        .append(key)
        .append(": not linearizable (")
        .append(ops.size())
        .append(" operations). The longest legal order found linearizes ")
        .append(order.size())
        .append(" of them");
    int from = Math.max(0, order.size() - 8);
    if (order.isEmpty()) {
      s.append(".\n");
    } else {
      s.append(", ending with:\n");
      for (Operation op : order.subList(from, order.size())) {
        s.append("    ").append(op.describe()).append('\n');
      }
    }
    Set<Operation> done = new HashSet<>(order);
    s.append("  after which none of these can come next (in time order):\n");
    ops.stream()
        .filter(o -> !done.contains(o))
        .sorted(Comparator.comparingLong(Operation::called))
        .limit(8)
        .forEach(
            o ->
                s.append("    ")
                    .append(o.describe())
                    .append(o == blocking ? "   <- returned before it could be placed" : "")
                    .append('\n'));
    return s.toString();
  }
}
