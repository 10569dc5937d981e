package io.shale.ops.seed;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The matrix's report ({@code matrix.md}): one table per figure, one row per cell, each run of
 * Shale "after" and of RocksDB, the ratio of their medians and whether the cell meets the figure's
 * target. A cell whose run failed shows "-" for that run and is judged on the runs it has.
 */
final class MatrixReport {
  /** How a figure's target is judged. */
  private enum Rule {
    /** Shale's median over RocksDB's at most the bound. */
    RATIO_AT_MOST,
    /** Shale's median over RocksDB's at least the bound. */
    RATIO_AT_LEAST,
    /** Shale's median itself at most the bound (a share, or a fraction of the memory limit). */
    VALUE_AT_MOST,
    /** Shown, not judged. */
    NONE
  }

  private record Figure(
      String name,
      String unit,
      double scale,
      ToDoubleFunction<RunResult> value,
      Rule rule,
      double bound) {
    String target() {
      return switch (rule) {
        case RATIO_AT_MOST -> String.format(Locale.ROOT, "Shale / RocksDB at most %.1fx", bound);
        case RATIO_AT_LEAST -> String.format(Locale.ROOT, "Shale / RocksDB at least %.1fx", bound);
        case VALUE_AT_MOST -> "Shale at most " + format(bound);
        case NONE -> "none (shown for context)";
      };
    }

    String format(double v) {
      if (Double.isNaN(v)) {
        return "-";
      }
      double shown = v / scale;
      // About three significant digits: 1,234 / 123.4 / 12.34.
      String number =
          String.format(
              Locale.ROOT,
              Math.abs(shown) >= 1000 ? "%,.0f" : Math.abs(shown) >= 100 ? "%.1f" : "%.2f",
              shown);
      return unit.isEmpty() ? number : number + " " + unit;
    }
  }

  /** The figures the matrix judges, with their targets; then some shown for context only. */
  private static final List<Figure> FIGURES =
      List.of(
          new Figure(
              "Read P99 during compaction",
              "ms",
              1000,
              RunResult::readP99DuringCompactionUs,
              Rule.RATIO_AT_MOST,
              1.0),
          new Figure(
              "Read P99.9, all reads", "ms", 1000, RunResult::readP999Us, Rule.RATIO_AT_MOST, 1.0),
          new Figure(
              "Read P99.9 during compaction",
              "ms",
              1000,
              RunResult::readP999DuringCompactionUs,
              Rule.RATIO_AT_MOST,
              1.0),
          new Figure(
              "Read P99.9 with no compaction running",
              "ms",
              1000,
              RunResult::readP999OutsideCompactionUs,
              Rule.NONE,
              0),
          new Figure("Longest read", "ms", 1000, RunResult::readMaxUs, Rule.RATIO_AT_MOST, 1.0),
          new Figure("Scan P99", "ms", 1000, RunResult::scanP99Us, Rule.RATIO_AT_MOST, 1.0),
          new Figure(
              "Space amplification at the end",
              "",
              1,
              RunResult::spaceAmplification,
              Rule.RATIO_AT_MOST,
              1.0),
          new Figure(
              "Throughput of the mixed phase",
              "ops/s",
              1,
              RunResult::throughput,
              Rule.RATIO_AT_LEAST,
              1.0),
          new Figure(
              "Disk bytes read per operation",
              "KiB",
              1024,
              r -> r.ops() == 0 ? Double.NaN : (double) r.diskBytesReadMixed() / r.ops(),
              Rule.RATIO_AT_MOST,
              1.2),
          new Figure(
              "JVM GC pauses, share of the mixed phase",
              "%",
              0.01,
              r -> r.gcMillis() / (r.mixedSeconds() * 1000.0),
              Rule.VALUE_AT_MOST,
              0.01),
          new Figure(
              "Resident memory at the end, share of the memory limit",
              "%",
              0.01,
              r -> r.memoryLimit() <= 0 ? Double.NaN : (double) r.residentBytes() / r.memoryLimit(),
              Rule.VALUE_AT_MOST,
              1.0),
          new Figure(
              "Write amplification", "", 1, RunResult::writeAmplification, Rule.RATIO_AT_MOST, 1.0),
          new Figure("Write P99", "ms", 1000, RunResult::writeP99Us, Rule.RATIO_AT_MOST, 1.0),
          new Figure("Load time", "s", 1, RunResult::loadSeconds, Rule.RATIO_AT_MOST, 1.0),
          new Figure("Burst bytes accepted", "MiB", 1 << 20, RunResult::burstBytes, Rule.NONE, 0),
          new Figure(
              "Read P99 inside burst windows",
              "ms",
              1000,
              RunResult::readP99InBurstUs,
              Rule.NONE,
              0));

  /** Every run of one cell: per run, the results of "after" and RocksDB (either may be absent). */
  static final class CellRuns {
    private final List<RunResult> shale = new ArrayList<>();
    private final List<RunResult> rocks = new ArrayList<>();

    /** Adds one run's results; a failed run adds nothing and shows as "-". */
    void add(int run, List<RunResult> results) {
      while (shale.size() < run) {
        shale.add(null);
        rocks.add(null);
      }
      for (RunResult r : results) {
        if (r.config().equals(SeedConfig.AFTER.slug())) {
          shale.set(run - 1, r);
        } else if (r.config().equals(SeedConfig.ROCKSDB.slug())) {
          rocks.set(run - 1, r);
        }
      }
    }
  }

  private final Map<String, CellRuns> cells = new LinkedHashMap<>();
  private final int runs;
  private final String header;

  /**
   * @param runs how many runs of each cell were asked for
   * @param header the report's first paragraph (settings, revision)
   */
  MatrixReport(int runs, String header) {
    this.runs = runs;
    this.header = header;
  }

  /** Run {@code run} (1-based) of {@code cell}; {@code results} empty when it failed. */
  void add(MatrixCell cell, int run, List<RunResult> results) {
    cells.computeIfAbsent(cell.name(), n -> new CellRuns()).add(run, results);
  }

  /** The median of the values present (NaN when none is). */
  static double median(double... values) {
    double[] present = Arrays.stream(values).filter(v -> !Double.isNaN(v)).sorted().toArray();
    if (present.length == 0) {
      return Double.NaN;
    }
    int mid = present.length / 2;
    return present.length % 2 == 1 ? present[mid] : (present[mid - 1] + present[mid]) / 2;
  }

  private double[] values(List<RunResult> rs, ToDoubleFunction<RunResult> f) {
    double[] v = new double[runs];
    for (int i = 0; i < runs; i++) {
      RunResult r = i < rs.size() ? rs.get(i) : null;
      v[i] = r == null ? Double.NaN : f.applyAsDouble(r);
    }
    return v;
  }

  /** "yes", "no", or "-" (not judged, or no run to judge). */
  private static String met(Figure f, double shale, double rocks) {
    if (f.rule() == Rule.NONE || Double.isNaN(shale)) {
      return "-";
    }
    if (f.rule() == Rule.VALUE_AT_MOST) {
      return shale <= f.bound() ? "yes" : "**no**";
    }
    if (Double.isNaN(rocks) || rocks == 0) {
      return "-";
    }
    double ratio = shale / rocks;
    boolean ok = f.rule() == Rule.RATIO_AT_MOST ? ratio <= f.bound() : ratio >= f.bound();
    return ok ? "yes" : "**no**";
  }

  private String joined(Figure f, double[] v) {
    List<String> parts = new ArrayList<>();
    for (double x : v) {
      parts.add(f.format(x));
    }
    return String.join(", ", parts);
  }

  String markdown() {
    StringBuilder b = new StringBuilder(header).append("\n\n");
    b.append("Each figure: every run of Shale \"after\" and of RocksDB in each cell, the ratio of")
        .append(" their medians, and whether the cell meets the target.\n");
    for (Figure f : FIGURES) {
      b.append("\n### ").append(f.name()).append(" (target: ").append(f.target()).append(")\n\n");
      b.append("| cell | Shale, runs | RocksDB, runs | Shale / RocksDB | met |\n");
      b.append("|---|---:|---:|---:|:---:|\n");
      for (Map.Entry<String, CellRuns> e : cells.entrySet()) {
        double[] s = values(e.getValue().shale, f.value());
        double[] r = values(e.getValue().rocks, f.value());
        double ms = median(s);
        double mr = median(r);
        String ratio =
            Double.isNaN(ms) || Double.isNaN(mr) || mr == 0
                ? "-"
                : String.format(Locale.ROOT, "%.2fx", ms / mr);
        b.append("| ")
            .append(e.getKey())
            .append(" | ")
            .append(joined(f, s))
            .append(" | ")
            .append(joined(f, r))
            .append(" | ")
            .append(ratio)
            .append(" | ")
            .append(met(f, ms, mr))
            .append(" |\n");
      }
    }
    return b.toString();
  }
}
