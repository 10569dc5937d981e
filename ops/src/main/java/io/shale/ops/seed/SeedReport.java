package io.shale.ops.seed;

import io.shale.engine.config.ByteSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/** The seed benchmark's table (markdown and CSV) and its targets, from the runs' results. */
final class SeedReport {
  /** How the run was set up, for the report's header. */
  record Setup(
      boolean quick,
      long keys,
      long dataBytes,
      String memory,
      int warmupSeconds,
      int mixedSeconds,
      int threads,
      long seed,
      String burst,
      String revision) {}

  private enum Unit {
    MS,
    COUNT,
    RATE,
    GIB_PER_HOUR,
    MIB,
    RATIO,
    PERCENT,
    TABLES
  }

  private record Metric(String name, Unit unit, ToDoubleFunction<RunResult> value) {}

  private static final List<Metric> METRICS =
      List.of(
          new Metric("Read P50", Unit.MS, r -> r.readP50Us()),
          new Metric("Read P99 (no compaction)", Unit.MS, r -> r.readP99OutsideCompactionUs()),
          new Metric("Read P99 (during compaction)", Unit.MS, r -> r.readP99DuringCompactionUs()),
          new Metric("Write P99", Unit.MS, r -> r.writeP99Us()),
          new Metric("Bytes compacted per hour", Unit.GIB_PER_HOUR, RunResult::compactedPerHour),
          new Metric("Filter and index memory", Unit.MIB, r -> r.filterIndexBytes()),
          new Metric("WriteThrottled errors", Unit.COUNT, r -> r.throttled()),
          new Metric("Throughput (ops/s)", Unit.RATE, RunResult::throughput),
          new Metric("Write amplification", Unit.RATIO, RunResult::writeAmplification),
          new Metric("Space amplification", Unit.RATIO, RunResult::spaceAmplification),
          new Metric(
              "SSTables touched per point read, tombstone-heavy ranges",
              Unit.TABLES,
              r -> r.hotTablesTouched()),
          new Metric(
              "SSTables probed (filter checked) per point read, same ranges",
              Unit.TABLES,
              r -> r.hotTablesProbed()),
          new Metric(
              "SSTables touched per point read, all keys", Unit.TABLES, r -> r.allTablesTouched()),
          new Metric("Read P99 (all)", Unit.MS, r -> r.readP99Us()),
          new Metric("Read P99.9 (all)", Unit.MS, r -> r.readP999Us()),
          new Metric("Read P99.9 (no compaction)", Unit.MS, r -> r.readP999OutsideCompactionUs()),
          new Metric(
              "Read P99.9 (during compaction)", Unit.MS, r -> r.readP999DuringCompactionUs()),
          new Metric("Longest read", Unit.MS, r -> r.readMaxUs()),
          new Metric("Read P99 (inside burst windows)", Unit.MS, r -> r.readP99InBurstUs()),
          new Metric("Burst bytes accepted", Unit.MIB, r -> r.burstBytes()),
          new Metric("Burst write P99", Unit.MS, r -> r.burstWriteP99Us()),
          new Metric(
              "Seconds with no completed client operation", Unit.COUNT, r -> r.secondsWithoutOps()),
          new Metric("JVM GC time in the mixed phase", Unit.MS, r -> r.gcMillis() * 1000.0),
          new Metric("Disk bytes read in the mixed phase", Unit.MIB, r -> r.diskBytesReadMixed()),
          new Metric(
              "Engine file reads in the mixed phase: gets",
              Unit.MIB,
              r -> known(r.fileReadPointMixed())),
          new Metric(
              "Engine file reads in the mixed phase: scans",
              Unit.MIB,
              r -> known(r.fileReadScanMixed())),
          new Metric(
              "Engine file reads in the mixed phase: compactions, blob GC, opening files",
              Unit.MIB,
              r -> known(r.fileReadBackgroundMixed())),
          new Metric(
              "Disk bytes written, load and mixed phases", Unit.MIB, r -> r.diskBytesWritten()),
          new Metric("Scan P99 (10-100 keys)", Unit.MS, r -> r.scanP99Us()),
          new Metric("Time with a compaction running", Unit.PERCENT, r -> r.compactionShare()),
          new Metric(
              "Compaction intervals in the mixed phase", Unit.COUNT, r -> r.compactionIntervals()),
          new Metric("Write stall/delay time", Unit.MS, r -> r.stallMicros()),
          new Metric(
              "Load rate (MiB/s)", Unit.RATE, r -> (r.loadBytes() / 1048576.0) / r.loadSeconds()),
          new Metric("Memory peak, page cache included", Unit.MIB, r -> r.memoryPeak()),
          new Metric(
              "Resident memory at the end (heap and native)", Unit.MIB, r -> r.residentBytes()));

  private final List<RunResult> results;
  private final Setup setup;

  SeedReport(List<RunResult> results, Setup setup) {
    this.results = results;
    this.setup = setup;
  }

  private Optional<RunResult> of(SeedConfig c) {
    return results.stream().filter(r -> r.config().equals(c.slug())).findFirst();
  }

  /** A count the engine may not report (negative): NaN, shown as "n/a". */
  private static double known(long v) {
    return v < 0 ? Double.NaN : v;
  }

  private static String format(Unit u, double v) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    return switch (u) {
      case MS -> String.format(Locale.ROOT, v < 1000 ? "%.3f ms" : "%.2f ms", v / 1000);
      case COUNT -> String.format(Locale.ROOT, "%,.0f", v);
      case RATE -> String.format(Locale.ROOT, "%,.0f", v);
      case GIB_PER_HOUR -> String.format(Locale.ROOT, "%.2f GiB", v / (1L << 30));
      case MIB -> String.format(Locale.ROOT, "%.2f MiB", v / (1L << 20));
      case RATIO -> String.format(Locale.ROOT, "%.2f", v);
      case PERCENT -> String.format(Locale.ROOT, "%.0f%%", v * 100);
      case TABLES -> String.format(Locale.ROOT, "%.3f", v);
    };
  }

  private static String ratio(double a, double b) {
    if (Double.isNaN(a) || Double.isNaN(b)) {
      return "-";
    }
    return b == 0 ? (a == 0 ? "=" : "-") : String.format(Locale.ROOT, "%.2fx", a / b);
  }

  String markdown() {
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "Seed benchmark, %s run, engine revision %s: %,d keys "
                + "(%s of keys and values loaded), %s; %d s of unmeasured warm-up, then a mixed phase of "
                + "%d s with %d client threads and %s, seed %d.%n%n",
            setup.quick() ? "quick" : "full",
            setup.revision(),
            setup.keys(),
            ByteSize.format(setup.dataBytes()),
            setup.memory(),
            setup.warmupSeconds(),
            setup.mixedSeconds(),
            setup.threads(),
            setup.burst(),
            setup.seed()));
    Optional<RunResult> before = of(SeedConfig.BEFORE);
    Optional<RunResult> after = of(SeedConfig.AFTER);
    Optional<RunResult> rocks = of(SeedConfig.ROCKSDB);
    b.append("| Metric |");
    for (RunResult r : results) {
      b.append(' ').append(SeedConfig.ofSlug(r.config()).label()).append(" |");
    }
    boolean vsBefore = before.isPresent() && after.isPresent();
    boolean vsRocks = rocks.isPresent() && after.isPresent();
    b.append(vsBefore ? " after / before |" : "").append(vsRocks ? " after / RocksDB |" : "");
    b.append("\n|---|")
        .append("---:|".repeat(results.size() + (vsBefore ? 1 : 0) + (vsRocks ? 1 : 0)))
        .append('\n');
    for (Metric m : METRICS) {
      b.append("| ").append(m.name()).append(" |");
      for (RunResult r : results) {
        b.append(' ').append(format(m.unit(), m.value().applyAsDouble(r)));
        if (m.name().startsWith("WriteThrottled") && r.config().equals("rocksdb")) {
          b.append(" (stalls instead)");
        }
        b.append(" |");
      }
      if (vsBefore) {
        b.append(' ')
            .append(
                ratio(m.value().applyAsDouble(after.get()), m.value().applyAsDouble(before.get())))
            .append(" |");
      }
      if (vsRocks) {
        b.append(' ')
            .append(
                ratio(m.value().applyAsDouble(after.get()), m.value().applyAsDouble(rocks.get())))
            .append(" |");
      }
      b.append('\n');
    }
    List<String[]> targets = targets(before, after, rocks);
    if (!targets.isEmpty()) {
      b.append("\n| Target | Measured | Met |\n|---|---:|:---:|\n");
      for (String[] t : targets) {
        b.append("| ")
            .append(t[0])
            .append(" | ")
            .append(t[1])
            .append(" | ")
            .append(t[2])
            .append(" |\n");
      }
    }
    return b.toString();
  }

  /** The targets: {description, measured, yes/no}. */
  private static List<String[]> targets(
      Optional<RunResult> before, Optional<RunResult> after, Optional<RunResult> rocks) {
    List<String[]> t = new ArrayList<>();
    if (before.isPresent() && after.isPresent()) {
      RunResult b = before.get();
      RunResult a = after.get();
      lowerBy(
          t,
          "after vs before: read P99 during compaction at least 3x lower",
          b.readP99DuringCompactionUs(),
          a.readP99DuringCompactionUs(),
          3,
          Unit.MS);
      lowerBy(
          t,
          "after vs before: bytes compacted at least 3x fewer",
          b.compactedPerHour(),
          a.compactedPerHour(),
          3,
          Unit.GIB_PER_HOUR);
      lowerBy(
          t,
          "after vs before: SSTables touched per point read on tombstone-heavy ranges at most half",
          b.hotTablesTouched(),
          a.hotTablesTouched(),
          2,
          Unit.TABLES);
    }
    if (rocks.isPresent() && after.isPresent()) {
      RunResult r = rocks.get();
      RunResult a = after.get();
      double tp = a.throughput() / r.throughput();
      t.add(
          new String[] {
            "after vs RocksDB: throughput at least 1.0x",
            String.format(Locale.ROOT, "%.2fx", tp),
            tp >= 1.0 ? "yes" : "no"
          });
      lowerBy(
          t,
          "after vs RocksDB: read P99 during compaction at most 1.0x",
          r.readP99DuringCompactionUs(),
          a.readP99DuringCompactionUs(),
          1,
          Unit.MS);
      lowerBy(
          t,
          "after vs RocksDB: write amplification at most 1.0x",
          r.writeAmplification(),
          a.writeAmplification(),
          1,
          Unit.RATIO);
      lowerBy(
          t,
          "after vs RocksDB: read P99.9 at most 1.0x",
          r.readP999Us(),
          a.readP999Us(),
          1,
          Unit.MS);
      lowerBy(
          t,
          "after vs RocksDB: space amplification at most 1.0x",
          r.spaceAmplification(),
          a.spaceAmplification(),
          1,
          Unit.RATIO);
      lowerBy(
          t,
          "after vs RocksDB: disk bytes read per operation at most 1.0x",
          (double) r.diskBytesReadMixed() / Math.max(1, r.ops()),
          (double) a.diskBytesReadMixed() / Math.max(1, a.ops()),
          1,
          Unit.COUNT);
      if (r.burstBytes() > 0) {
        double accepted = (double) a.burstBytes() / r.burstBytes();
        t.add(
            new String[] {
              "after vs RocksDB: burst bytes accepted at least 1.0x",
              String.format(Locale.ROOT, "%.2fx", accepted),
              accepted >= 1.0 ? "yes" : "no"
            });
      }
    }
    if (after.isPresent()) {
      RunResult a = after.get();
      t.add(
          new String[] {
            "after: no second without a completed client operation",
            Long.toString(a.secondsWithoutOps()),
            a.secondsWithoutOps() == 0 ? "yes" : "no"
          });
      double gcShare = a.gcMillis() / (a.mixedSeconds() * 1000.0);
      t.add(
          new String[] {
            "after: JVM GC under 2% of the mixed phase",
            String.format(Locale.ROOT, "%.1f%%", gcShare * 100),
            gcShare < 0.02 ? "yes" : "no"
          });
    }
    return t;
  }

  private static void lowerBy(
      List<String[]> t, String what, double reference, double measured, double factor, Unit unit) {
    String m =
        (reference == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", measured / reference))
            + " ("
            + format(unit, measured)
            + " vs "
            + format(unit, reference)
            + ")";
    t.add(new String[] {what, m, measured * factor <= reference ? "yes" : "no"});
  }

  String csv() {
    StringBuilder b = new StringBuilder("metric,unit");
    for (RunResult r : results) {
      b.append(',').append(r.config());
    }
    b.append('\n');
    for (Metric m : METRICS) {
      b.append('"').append(m.name()).append("\",").append(m.unit().name().toLowerCase(Locale.ROOT));
      for (RunResult r : results) {
        double v = m.value().applyAsDouble(r);
        v =
            switch (m.unit()) {
              case MS -> v / 1000;
              case GIB_PER_HOUR -> v / (1L << 30);
              case MIB -> v / (1L << 20);
              default -> v;
            };
        b.append(',').append(String.format(Locale.ROOT, "%.4f", v));
      }
      b.append('\n');
    }
    return b.toString();
  }
}
