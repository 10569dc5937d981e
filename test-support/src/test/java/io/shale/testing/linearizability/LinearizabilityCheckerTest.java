package io.shale.testing.linearizability;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker on histories written out as small scripts, one operation per line: {@code PROCESS OP
 * KEY ARGS CALLED RETURNED}, where OP is {@code write KEY VALUE}, {@code read KEY VALUE} (the value
 * read; {@code -} for absent) or {@code cas KEY EXPECTED NEW ok|fail|?}, and RETURNED is {@code ?}
 * when the outcome is unknown. Then randomized histories linearizable by construction, mutations of
 * them that cannot be, and the time it takes on 10,000 operations.
 */
class LinearizabilityCheckerTest {
  @TempDir Path dir;

  static List<Operation> parse(String script) {
    List<Operation> ops = new ArrayList<>();
    for (String line : script.strip().split("\n")) {
      String[] w = line.strip().split("\\s+");
      int id = ops.size();
      int p = Integer.parseInt(w[0].substring(1));
      String key = w[2];
      long called = Long.parseLong(w[w.length - 2]);
      long returned =
          w[w.length - 1].equals("?") ? Long.MAX_VALUE : Long.parseLong(w[w.length - 1]);
      ops.add(
          switch (w[1]) {
            case "write" -> Operation.write(id, p, key, value(w[3]), called, returned);
            case "read" -> Operation.read(id, p, key, value(w[3]), called, returned);
            case "cas" ->
                Operation.cas(
                    id, p, key, value(w[3]), value(w[4]), w[5].equals("ok"), called, returned);
            default -> throw new IllegalArgumentException("bad line: " + line);
          });
    }
    return ops;
  }

  private static String value(String w) {
    return w.equals("-") ? null : w;
  }

  private static boolean linearizable(String script) {
    return LinearizabilityChecker.check(parse(script)).linearizable();
  }

  @Test
  void sequentialAndOverlappingHistoriesThatAreLinearizable() {
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 read  x a 20 30
        p1 write x b 40 50
        p2 read  x b 60 70
        """))
        .isTrue();
    // A read overlapping a write may see either value; two overlapping reads may disagree.
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p1 write x b 20 60
        p2 read  x b 25 35
        p3 read  x a 22 40
        """))
        .isTrue();
    // Absent before any write.
    assertThat(
            linearizable(
                """
        p2 read  x -  0  5
        p1 write x a 10 20
        """))
        .isTrue();
  }

  @Test
  void aStaleReadIsCaught() {
    LinearizabilityChecker.Result r =
        LinearizabilityChecker.check(
            parse(
                """
        p1 write x a  0 10
        p1 write x b 20 30
        p2 read  x a 40 50
        """));
    assertThat(r.linearizable()).isFalse();
    assertThat(r.key()).isEqualTo("x");
    assertThat(r.explanation()).contains("read x -> a [40, 50]");
  }

  @Test
  void aLostWriteAndANeverWrittenValueAreCaught() {
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 read  x - 20 30
        """))
        .as("acknowledged write lost")
        .isFalse();
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 read  x z 20 30
        """))
        .as("value never written")
        .isFalse();
  }

  @Test
  void aCompareAndSetAppliedTwiceIsCaught() {
    // A retried increment applied twice: 0 -> 1 by p1, and p2's read sees 2 with no second CAS.
    assertThat(
            linearizable(
                """
        p1 write x 0  0 10
        p1 cas   x 0 1 ok 20 30
        p2 read  x 2 40 50
        """))
        .isFalse();
    // Two CASes from the same expected value cannot both apply.
    assertThat(
            linearizable(
                """
        p1 write x 0  0 10
        p1 cas   x 0 1 ok 20 30
        p2 cas   x 0 1 ok 35 45
        """))
        .isFalse();
    // But one applies and one fails, in either order when they overlap.
    assertThat(
            linearizable(
                """
        p1 write x 0  0 10
        p1 cas   x 0 1 fail 20 40
        p2 cas   x 0 2 ok   25 35
        p3 read  x 2 50 60
        """))
        .isTrue();
  }

  @Test
  void operationsWithUnknownOutcomeMayOrMayNotHaveTakenEffect() {
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 write x b 20 ?
        p3 read  x b 30 40
        p3 read  x b 50 60
        """))
        .as("took effect")
        .isTrue();
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 write x b 20 ?
        p3 read  x a 30 40
        p3 read  x a 90 99
        """))
        .as("never took effect")
        .isTrue();
    assertThat(
            linearizable(
                """
        p1 write x a  0 10
        p2 write x b 20 ?
        p3 read  x b 30 40
        p3 read  x a 50 60
        """))
        .as("took effect, then was undone")
        .isFalse();
    assertThat(
            linearizable(
                """
        p1 write x 0  0 10
        p2 cas   x 0 1 ? 20 ?
        p3 read  x 1 30 40
        """))
        .isTrue();
    assertThat(
            linearizable(
                """
        p1 write x 0  0 10
        p2 cas   x 0 1 ? 20 ?
        p3 read  x 0 30 40
        """))
        .isTrue();
  }

  @Test
  void aSearchTooLargeForItsBudgetSaysUndecidedNotWrong() {
    // 20 writes of unknown outcome overlap everything after them; the final read matches none,
    // so every subset of them is tried: 2^20 states, over a budget of 10,000.
    StringBuilder script = new StringBuilder("p0 write x a 0 1\n");
    for (int i = 0; i < 20; i++) {
      script.append("p").append(i + 1).append(" write x w").append(i).append(" 2 ?\n");
    }
    script.append("p99 read x z 10 11\n");
    LinearizabilityChecker.Result r =
        LinearizabilityChecker.check(parse(script.toString()), 10_000);
    assertThat(r.decided()).isFalse();
    assertThat(r.linearizable()).isFalse();
    assertThat(r.explanation()).contains("undecided");
    assertThat(
            LinearizabilityChecker.check(parse("p1 write x a 0 1\np2 read x a 2 3"), 10_000)
                .decided())
        .isTrue();
  }

  @Test
  void keysAreCheckedApartAndTheFailingOneIsNamed() throws Exception {
    List<Operation> h =
        parse(
            """
        p1 write x a  0 10
        p2 read  x a 20 30
        p1 write y a  0 10
        p1 write y b 20 30
        p2 read  y a 40 50
        """);
    LinearizabilityChecker.Result r = LinearizabilityChecker.check(h);
    assertThat(r.linearizable()).isFalse();
    assertThat(r.key()).isEqualTo("y");
    Path saved = HistoryFile.write(dir.resolve("history.txt"), h, r);
    String text = Files.readString(saved);
    assertThat(text)
        .startsWith("# NOT linearizable, 5 operations")
        .contains("operations of key y", "#4 p2 read y -> a [40, 50]");
  }

  /**
   * A history made by giving each operation a random instant inside its interval and applying them
   * in that order to real registers: linearizable by construction.
   */
  static List<Operation> randomLinearizable(long seed, int processes, int opsPerProcess, int keys) {
    SplittableRandom random = new SplittableRandom(seed);
    record Planned(int process, long called, long returned, long at, String key, int kind) {}
    List<Planned> planned = new ArrayList<>();
    for (int p = 0; p < processes; p++) {
      long t = random.nextLong(50);
      for (int i = 0; i < opsPerProcess; i++) {
        long called = t + random.nextLong(1, 20);
        long returned = called + random.nextLong(1, 60);
        planned.add(
            new Planned(
                p,
                called,
                returned,
                random.nextLong(called, returned + 1),
                "k" + random.nextInt(keys),
                random.nextInt(3)));
        t = returned;
      }
    }
    planned.sort(Comparator.comparingLong(Planned::at));
    Map<String, String> registers = new HashMap<>();
    List<Operation> ops = new ArrayList<>();
    int values = 0;
    for (Planned pl : planned) {
      int id = ops.size();
      String current = registers.get(pl.key());
      switch (pl.kind()) {
        case 0 ->
            ops.add(
                Operation.read(id, pl.process(), pl.key(), current, pl.called(), pl.returned()));
        case 1 -> {
          String v = "v" + values++;
          registers.put(pl.key(), v);
          ops.add(Operation.write(id, pl.process(), pl.key(), v, pl.called(), pl.returned()));
        }
        default -> {
          String expected = random.nextBoolean() ? current : "v" + random.nextInt(values + 1);
          String v = "v" + values++;
          boolean applied = java.util.Objects.equals(expected, current);
          if (applied) {
            registers.put(pl.key(), v);
          }
          ops.add(
              Operation.cas(
                  id, pl.process(), pl.key(), expected, v, applied, pl.called(), pl.returned()));
        }
      }
    }
    return ops;
  }

  @Test
  void randomHistoriesLinearizableByConstructionPassAndCorruptedReadsFail() {
    for (long seed = 1; seed <= 200; seed++) {
      List<Operation> h = randomLinearizable(seed, 1 + (int) (seed % 5), 30, 1 + (int) (seed % 3));
      LinearizabilityChecker.Result r = LinearizabilityChecker.check(h);
      assertThat(r.linearizable()).as("seed %d: %s", seed, r.explanation()).isTrue();
      // A read of a value no write ever wrote can never be linearized.
      List<Operation> corrupted = new ArrayList<>(h);
      for (int i = 0; i < corrupted.size(); i++) {
        Operation o = corrupted.get(i);
        if (o.kind() == Operation.Kind.READ) {
          corrupted.set(
              i,
              Operation.read(
                  o.id(), o.process(), o.key(), "never-written", o.called(), o.returned()));
          break;
        }
      }
      if (!corrupted.equals(h)) {
        assertThat(LinearizabilityChecker.check(corrupted).linearizable())
            .as("seed %d", seed)
            .isFalse();
      }
    }
  }

  @Test
  void tenThousandOperationsAreCheckedWithinSeconds() {
    // 10 processes x 1000 operations on 10 keys, and on a single key.
    for (int keys : new int[] {10, 1}) {
      List<Operation> h = randomLinearizable(42, 10, 1000, keys);
      assertThat(h).hasSize(10_000);
      long start = System.nanoTime();
      assertThat(LinearizabilityChecker.check(h).linearizable()).isTrue();
      long millis = (System.nanoTime() - start) / 1_000_000;
      System.out.printf("checker: 10,000 operations on %d key(s) in %d ms%n", keys, millis);
      assertThat(millis).as("%d keys", keys).isLessThan(10_000);
    }
  }
}
