package io.shale.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ops/bin/nemesis-totals} run as a process over summary tables written by {@link
 * NemesisRun#summaryLine}, so the script and the rows it parses cannot drift apart.
 */
class NemesisTotalsTest {
  @TempDir Path dir;

  record Result(int code, String out) {}

  static Result totals(Path... summaries) throws Exception {
    List<String> args = new ArrayList<>();
    for (Path s : summaries) {
      args.add(s.toString());
    }
    return script("nemesis-totals", args);
  }

  static Result script(String name, List<String> args) throws Exception {
    Path root = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();
    List<String> command = new ArrayList<>(List.of(root.resolve("ops/bin/" + name).toString()));
    command.addAll(args);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new Result(p.exitValue(), out);
  }

  @Test
  void partsAreAddedUpByKindAndARunNumberCountsOnce() throws Exception {
    Path a = dir.resolve("a");
    Path b = dir.resolve("b");
    // Thousands separators in operations and unknown outcomes, as the suite writes them.
    NemesisRun.appendToSummary(
        a, NemesisRun.summaryLine(1, "KILL_LEADER", 3, 61.4, 12_345, 2, 9, "linearizable", 80, 0));
    NemesisRun.appendToSummary(
        a, NemesisRun.summaryLine(501, "MIXED", 5, 70, 1_075, 1_010, 8, "linearizable", 22, 0));
    NemesisRun.appendToSummary(
        b, NemesisRun.summaryLine(2, "KILL_LEADER", 3, 62, 1_000, 0, 7, "linearizable", 10, 0));
    // Run 1 again in a later part: its last line replaces the first.
    NemesisRun.appendToSummary(
        b, NemesisRun.summaryLine(1, "KILL_LEADER", 3, 60, 5, 1, 4, "linearizable", 10, 0));

    Result r = totals(a.resolve("summary.md"), b.resolve("summary.md"));

    assertThat(r.code()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("| KILL_LEADER | 2 | 1005 | 1 | 11 | 0 |")
        .contains("| MIXED (5 nodes) | 1 | 1075 | 1010 | 8 | 0 |")
        .contains("| all | 3 | 2080 | 1011 | 19 | 0 |")
        .doesNotContain("not checked linearizable");
  }

  @Test
  void aRunNotCheckedLinearizableIsNamedAndItsAnomalyCounted() throws Exception {
    NemesisRun.appendToSummary(
        dir,
        NemesisRun.summaryLine(7, "PAUSE_LEADER", 3, 60, 900, 3, 5, "NOT linearizable", 40, 1));
    NemesisRun.appendToSummary(
        dir, NemesisRun.summaryLine(8, "PAUSE_LEADER", 3, 60, 100, 0, 5, "linearizable", 4, 0));

    Result r = totals(dir.resolve("summary.md"));

    assertThat(r.out())
        .contains("| PAUSE_LEADER | 2 | 1000 | 3 | 10 | 1 |")
        .contains("not checked linearizable: 7 (PAUSE_LEADER: NOT linearizable in 40 ms)");
  }

  /**
   * {@code ops/bin/long-form-count}: per code directory, only the kinds its COUNTING line lets
   * count; a kind restarted at later code keeps only its later runs.
   */
  @Test
  void theLongFormCountsEachCodesRowsByItsRule() throws Exception {
    Path older = dir.resolve("old");
    Path newer = dir.resolve("new");
    NemesisRun.appendToSummary(
        older, NemesisRun.summaryLine(1, "KILL_LEADER", 3, 60, 1_500, 2, 4, "linearizable", 10, 0));
    NemesisRun.appendToSummary(
        older, NemesisRun.summaryLine(2, "MEMBERSHIP", 3, 60, 9_000, 0, 3, "linearizable", 10, 0));
    NemesisRun.appendToSummary(
        older, NemesisRun.summaryLine(501, "MIXED", 5, 60, 700, 7, 6, "linearizable", 10, 0));
    NemesisRun.appendToSummary(
        newer, NemesisRun.summaryLine(3, "MEMBERSHIP", 3, 60, 2_000, 1, 2, "linearizable", 10, 0));
    NemesisRun.appendToSummary(
        newer,
        NemesisRun.summaryLine(4, "KILL_LEADER", 3, 60, 500, 0, 5, "NOT linearizable", 10, 1));
    Files.writeString(
        dir.resolve("COUNTING"), "# rule\nold except MEMBERSHIP;MIXED (5 nodes)\n" + "new all\n");

    Result r = script("long-form-count", List.of(dir.toString()));

    assertThat(r.code()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("| fault | runs at old | runs at new | runs | operations |")
        .contains("| KILL_LEADER | 1 | 1 | 2 | 2,000 | 2 | 9 | 1 |")
        .contains("| MEMBERSHIP | 0 | 1 | 1 | 2,000 | 1 | 2 | 0 |")
        .contains("| MIXED (5 nodes) | 0 | 0 | 0 | 0 | 0 | 0 | 0 |")
        .contains("| all | 1 | 2 | 3 | 4,000 | 3 | 11 | 1 |")
        .contains("rows not counted (their kinds restarted at later code): old: 2;")
        .contains("not checked linearizable: 4 (KILL_LEADER: NOT linearizable in 10 ms)");
    // The 5-node kind comes after the 3-node ones.
    assertThat(r.out().indexOf("| MIXED (5 nodes)")).isGreaterThan(r.out().indexOf("| MEMBERSHIP"));

    Files.writeString(dir.resolve("COUNTING"), "old everything\n");
    Result bad = script("long-form-count", List.of(dir.toString()));
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.out()).contains("unknown rule 'everything' for old");
  }

  @Test
  void noRunsOrNoFileIsAnError() throws Exception {
    Path empty = Files.writeString(dir.resolve("empty.md"), "no table here\n");
    assertThat(totals(empty)).isEqualTo(new Result(1, "nemesis-totals: no runs found\n"));
    Result missing = totals(dir.resolve("absent.md"));
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.out()).contains("cannot read").contains("absent.md");
  }
}
