package io.shale.ops.seed;

import static io.shale.ops.seed.SeedReportTest.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MatrixReportTest {
  private static final MatrixCell SMALL = new MatrixCell(1, 512L << 20, MatrixCell.Writes.CAPPED);
  private static final MatrixCell LARGE =
      new MatrixCell(16, 2048L << 20, MatrixCell.Writes.UNCAPPED);

  @Test
  void theMatrixIsTheIssuesTwelveCells() {
    List<MatrixCell> all = MatrixCell.all();
    assertThat(all).hasSize(12).doesNotHaveDuplicates();
    assertThat(all.get(0).name()).isEqualTo("t1-512MiB-steady");
    assertThat(all.get(11).name()).isEqualTo("t16-2GiB-uncapped");
    assertThat(SMALL.heap()).isEqualTo(128L << 20);
    assertThat(LARGE.heap()).isEqualTo(768L << 20);
    assertThat(SMALL.burst().bytesPerSecond()).isEqualTo(25L << 20);
    assertThat(LARGE.burst().bytesPerSecond()).isZero();
    assertThat(new MatrixCell(1, 512L << 20, MatrixCell.Writes.STEADY).burst().enabled()).isFalse();
  }

  @Test
  void cellsAreChosenByNameAndAnUnknownNameIsRefusedWithTheKnownOnes() {
    assertThat(MatrixCell.parse("t16-2GiB-uncapped, t1-512MiB-capped"))
        .containsExactly(LARGE, SMALL);
    assertThat(MatrixCell.parse("all")).hasSize(12);
    assertThatThrownBy(() -> MatrixCell.parse("t4-512MiB-steady"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("unknown cell 't4-512MiB-steady' (known: t1-512MiB-steady, ");
  }

  @Test
  void theMedianIgnoresMissingRuns() {
    assertThat(MatrixReport.median(3, 1, 2)).isEqualTo(2);
    assertThat(MatrixReport.median(4, 1)).isEqualTo(2.5);
    assertThat(MatrixReport.median(Double.NaN, 7)).isEqualTo(7);
    assertThat(MatrixReport.median(Double.NaN, Double.NaN)).isNaN();
  }

  @Test
  void eachFigureHasARowPerCellJudgedOnTheRatioOfMedians() {
    MatrixReport report = new MatrixReport(2, "header");
    // Small cell: Shale's P99 during compaction 50 and 60 ms against 100 and 100: 0.55x, met.
    report.add(SMALL, 1, List.of(shale(50_000, 12_000), rocks(100_000, 10_000)));
    report.add(SMALL, 2, List.of(shale(60_000, 12_000), rocks(100_000, 10_000)));
    // Large cell: Shale's second run failed; judged on its first, 150 against 100 ms: missed.
    report.add(LARGE, 1, List.of(shale(150_000, 8_000), rocks(100_000, 10_000)));
    report.add(LARGE, 2, List.of(rocks(100_000, 10_000)));
    String md = report.markdown();
    assertThat(md).startsWith("header\n");
    assertThat(md)
        .contains(
            "### Read P99 during compaction (target: Shale / RocksDB at most 1.0x)",
            "| t1-512MiB-capped | 50.00 ms, 60.00 ms | 100.0 ms, 100.0 ms | 0.55x | yes |",
            "| t16-2GiB-uncapped | 150.0 ms, - | 100.0 ms, 100.0 ms | 1.50x | **no** |");
    assertThat(md)
        .contains(
            "### Throughput of the mixed phase (target: Shale / RocksDB at least 1.0x)",
            "| t1-512MiB-capped | 1,200 ops/s, 1,200 ops/s | 1,000 ops/s, 1,000 ops/s | 1.20x | yes |",
            "| t16-2GiB-uncapped | 800.0 ops/s, - | 1,000 ops/s, 1,000 ops/s | 0.80x | **no** |");
    // An absolute target: GC share (150 ms of a 10 s phase: 1.5%) against at most 1%.
    assertThat(md)
        .contains(
            "### JVM GC pauses, share of the mixed phase (target: Shale at most 1.00 %)",
            "| t1-512MiB-capped | 1.50 %, 1.50 % | 1.50 %, 1.50 % | 1.00x | **no** |");
  }

  private static RunResult shale(double readP99DuringUs, long ops) {
    return result("after", readP99DuringUs, 1, 1.0, ops, 30_000_000);
  }

  private static RunResult rocks(double readP99DuringUs, long ops) {
    return result("rocksdb", readP99DuringUs, 1, 1.0, ops, 30_000_000);
  }
}
