package io.shale.ops.seed;

import static io.shale.ops.ScriptArguments.callerPath;
import static io.shale.ops.ScriptArguments.need;

import io.shale.engine.config.ByteSize;
import io.shale.ops.Directories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The seed benchmark ({@code ops/bin/seed-bench}): the seed's before/after table on Shale's engine,
 * side by side with RocksDB. Each configuration runs in its own JVM ({@link SeedRun}) inside a
 * memory-limited cgroup, one after the other, on the same data and request streams; this process
 * relays their progress, then writes the report ({@link SeedReport}) and the plot ({@link
 * LatencyPlot}).
 */
public final class SeedBench {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SeedBench.class);

  static final String USAGE =
      """
      usage: seed-bench [options]
        --quick                 a run of under a minute, not memory-limited, heap 256MiB (what CI runs)
        --memory SIZE           memory limit of each engine's process, page cache included (512MiB)
        --heap SIZE             JVM heap of each engine's process, inside that limit (128MiB)
        --data-ratio X          data set size as a multiple of --memory (3.0)
        --warmup-seconds N      unmeasured mixed workload before the timed phase (30; --quick: 1)
        --mixed-seconds N       length of the timed mixed phase per configuration (150)
        --threads N             client threads; reads wait on the disk, so more than cores (16)
        --seed N                request-stream seed (42)
        --burst                 add a burst writer to the mixed phase: 20 s of every 60 s at full speed
        --burst-period N        seconds from one burst's start to the next (60; implies --burst)
        --burst-length N        seconds each burst lasts (20; implies --burst)
        --burst-rate SIZE       bytes per second while bursting, 0 for full speed (0; implies --burst)
        --configs LIST          which of before,after,rocksdb to run, in that order (all)
        --matrix                every cell of threads {1,16} x memory {512MiB,2GiB} (heap 128MiB,
                                768MiB) x writes {steady, bursts capped at 25MiB/s, uncapped}, after
                                and rocksdb, --runs times; one table per figure in OUT/matrix.md
        --cells LIST            with --matrix: only these cells, e.g. t16-512MiB-capped (all)
        --runs N                with --matrix: runs of every cell, each pass over all cells (2)
        --out DIR               where the report and the engines' data go (ops/target/seed-bench)
        --shale-config FILE     [lsm] settings (ops/config/shale.toml's keys) applied over Shale
                                "after"'s seed settings, to measure another configuration
        --no-cgroup             do not limit memory (the report says so)
        --keep-data             keep each engine's data directory after its run
        --plot-only             draw seed-bench.png again from the runs already in --out
        -h, --help              this text
      Environment: SEED_BENCH_CHILD_OPTS, extra JVM options for each engine's process ({config} is
      replaced by the configuration's name), e.g. a Flight Recorder profile:
        SEED_BENCH_CHILD_OPTS='-XX:StartFlightRecording=filename=/tmp/seed-{config}.jfr,settings=profile'""";

  private boolean quick;
  private long memory = 512L << 20;
  private long heap = 128L << 20;
  private double dataRatio = 3.0;
  private int warmupSeconds = 30;
  private int mixedSeconds = 150;
  private int threads = 16;
  private long seed = 42;
  private boolean burstOn;
  private int burstPeriod = BurstSettings.DEFAULT.periodSeconds();
  private int burstLength = BurstSettings.DEFAULT.lengthSeconds();
  private long burstRate = BurstSettings.DEFAULT.bytesPerSecond();
  private BurstSettings burst = BurstSettings.NONE;
  private final List<SeedConfig> configs = new ArrayList<>(List.of(SeedConfig.values()));
  private Path out = Paths.get("ops/target/seed-bench");
  private boolean cgroup = true;
  private boolean keepData;
  private Path shaleConfig; // null: the seed's settings alone
  private boolean plotOnly;
  private boolean matrix;
  private List<MatrixCell> cells = MatrixCell.all();
  private int runs = 2;

  public static void main(String[] argv) throws Exception {
    SeedBench b = new SeedBench();
    try {
      if (!b.parse(argv)) {
        System.out.println(USAGE);
        return;
      }
    } catch (IllegalArgumentException e) {
      LOG.error("seed-bench: " + e.getMessage());
      System.out.println(USAGE);
      System.exit(2);
      return;
    }
    System.exit(b.run());
  }

  private boolean parse(String[] a) {
    boolean quickDefaults = false;
    for (int i = 0; i < a.length; i++) {
      switch (a[i]) {
        case "-h", "--help" -> {
          return false;
        }
        case "--quick" -> quickDefaults = true;
        case "--memory" -> memory = ByteSize.parse("--memory", need(a, ++i, "--memory"));
        case "--heap" -> heap = ByteSize.parse("--heap", need(a, ++i, "--heap"));
        case "--data-ratio" -> dataRatio = positive("--data-ratio", need(a, ++i, "--data-ratio"));
        case "--warmup-seconds" ->
            warmupSeconds = (int) nonNegative("--warmup-seconds", need(a, ++i, "--warmup-seconds"));
        case "--mixed-seconds" ->
            mixedSeconds = (int) positive("--mixed-seconds", need(a, ++i, "--mixed-seconds"));
        case "--threads" -> threads = (int) positive("--threads", need(a, ++i, "--threads"));
        case "--seed" -> seed = Long.parseLong(need(a, ++i, "--seed"));
        case "--burst" -> burstOn = true;
        case "--burst-period" -> {
          burstOn = true;
          burstPeriod = (int) positive("--burst-period", need(a, ++i, "--burst-period"));
        }
        case "--burst-length" -> {
          burstOn = true;
          burstLength = (int) positive("--burst-length", need(a, ++i, "--burst-length"));
        }
        case "--burst-rate" -> {
          burstOn = true;
          String rate = need(a, ++i, "--burst-rate");
          burstRate = rate.equals("0") ? 0 : ByteSize.parse("--burst-rate", rate);
        }
        case "--configs" -> {
          configs.clear();
          for (String s : need(a, ++i, "--configs").split(",")) {
            configs.add(SeedConfig.ofSlug(s.trim()));
          }
          configs.sort(Comparator.naturalOrder());
        }
        case "--out" -> out = callerPath(need(a, ++i, "--out"));
        case "--shale-config" -> shaleConfig = callerPath(need(a, ++i, "--shale-config"));
        case "--no-cgroup" -> cgroup = false;
        case "--keep-data" -> keepData = true;
        case "--plot-only" -> plotOnly = true;
        case "--matrix" -> matrix = true;
        case "--cells" -> cells = MatrixCell.parse(need(a, ++i, "--cells"));
        case "--runs" -> runs = (int) positive("--runs", need(a, ++i, "--runs"));
        default -> throw new IllegalArgumentException("unknown option " + a[i]);
      }
    }
    if (burstOn) {
      burst = new BurstSettings(burstPeriod, burstLength, burstRate);
    }
    if (matrix) {
      for (String cellOwned :
          List.of("--threads", "--memory", "--heap", "--burst", "--burst-rate", "--configs")) {
        if (List.of(a).contains(cellOwned)) {
          throw new IllegalArgumentException(
              cellOwned + " is set by each cell of --matrix (choose cells with --cells)");
        }
      }
      configs.clear();
      configs.addAll(List.of(SeedConfig.AFTER, SeedConfig.ROCKSDB));
    }
    if (quickDefaults) {
      quick = true;
      cgroup = false;
      if (!List.of(a).contains("--mixed-seconds")) {
        mixedSeconds = 6;
      }
      if (!List.of(a).contains("--warmup-seconds")) {
        warmupSeconds = 1;
      }
      if (!List.of(a).contains("--heap")) {
        heap = 256L << 20; // not memory-limited: room, so that a slow CI machine's GC copes
      }
    }
    if (!quick && heap + (64L << 20) > memory) {
      throw new IllegalArgumentException(
          "--heap "
              + ByteSize.format(heap)
              + " leaves no room in --memory "
              + ByteSize.format(memory)
              + " for the page cache");
    }
    return true;
  }

  private static double nonNegative(String name, String text) {
    double v = positive(name, text.equals("0") ? "1" : text);
    return text.equals("0") ? 0 : v;
  }

  private static double positive(String name, String text) {
    double v;
    try {
      v = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " needs a number, got '" + text + "'");
    }
    if (!(v > 0)) {
      throw new IllegalArgumentException(name + " must be positive, got " + text);
    }
    return v;
  }

  /** The number of initial keys whose load-phase key and value bytes reach {@code bytes}. */
  static long keysFor(long bytes, long seed) {
    long n = 0;
    for (long sum = 0; sum < bytes; n++) {
      sum += SeedWorkload.KEY_BYTES + SeedWorkload.loadValueSize(n, seed);
    }
    return n;
  }

  private int run() throws Exception {
    if (shaleConfig != null) {
      // A mistyped key or value fails here, not in every child after its load.
      SeedConfig.AFTER.shaleOptions(BenchScale.FULL, Files.readString(shaleConfig));
    }
    if (plotOnly) {
      LatencyPlot.write(out.resolve("seed-bench.png"), out, configs);
      System.out.println("seed-bench: wrote " + out.resolve("seed-bench.png"));
      return 0;
    }
    return matrix ? runMatrix() : runConfigs(out, new ArrayList<>());
  }

  /**
   * Every cell {@link #runs} times, one pass over all cells per run (so a cell's runs are apart in
   * time and their spread includes the machine's drift); then OUT/matrix.md. A cell's failed run is
   * reported and the matrix goes on.
   */
  private int runMatrix() throws Exception {
    Files.createDirectories(out);
    MatrixReport report =
        new MatrixReport(
            runs,
            String.format(
                Locale.ROOT,
                "Seed benchmark matrix, engine revision %s: %d cells x %d runs; data %s; warm-up"
                    + " %d s, mixed phase %d s; Shale \"after\" and RocksDB on the same request"
                    + " streams (seed %d)%s.",
                System.getProperty("shale.ops.revision", "unknown"),
                cells.size(),
                runs,
                quick
                    ? "48MiB, no memory limit (--quick)"
                    : String.format(Locale.ROOT, "%.1fx each cell's memory limit", dataRatio),
                warmupSeconds,
                mixedSeconds,
                seed,
                shaleConfig == null
                    ? ""
                    : "; Shale \"after\" with the [lsm] settings of " + shaleConfig));
    int failed = 0;
    for (int run = 1; run <= runs; run++) {
      for (MatrixCell cell : cells) {
        threads = cell.threads();
        memory = cell.memory();
        heap = quick ? heap : cell.heap();
        burst = cell.burst();
        System.out.printf(
            Locale.ROOT, "seed-bench: matrix cell %s, run %d of %d%n", cell.name(), run, runs);
        List<RunResult> results = new ArrayList<>();
        if (runConfigs(out.resolve(cell.name()).resolve("run-" + run), results) != 0) {
          failed++;
        }
        report.add(cell, run, results);
        Files.writeString(out.resolve("matrix.md"), report.markdown()); // readable as it goes
      }
    }
    System.out.println();
    System.out.println(report.markdown());
    System.out.println(
        "seed-bench: wrote " + out.resolve("matrix.md") + "; " + failed + " cell runs failed");
    return failed == 0 ? 0 : 1;
  }

  /**
   * Runs {@link #configs} one after the other with the current settings into {@code out}, adding
   * each configuration's result to {@code results} as it finishes; then that directory's report.
   * Returns 1 when a configuration failed.
   */
  private int runConfigs(Path out, List<RunResult> results) throws Exception {
    long dataBytes = quick ? 48L << 20 : (long) (dataRatio * memory);
    long keys = keysFor(dataBytes, seed);
    Files.createDirectories(out);
    String limitText =
        cgroup ? ByteSize.format(memory) + " (heap " + ByteSize.format(heap) + ")" : "none";
    System.out.printf(
        Locale.ROOT,
        "seed-bench: %s run, %,d keys (%s of keys and values), memory "
            + "limit %s, warm-up %d s, mixed phase %d s x %d threads, %s, configurations %s%n",
        quick ? "quick" : "full",
        keys,
        ByteSize.format(dataBytes),
        limitText,
        warmupSeconds,
        mixedSeconds,
        threads,
        burst.describe(),
        configs);
    String memoryNote = quick ? "not memory-limited (--quick)" : "not memory-limited (--no-cgroup)";
    for (SeedConfig c : configs) {
      Path data = out.resolve("data").resolve(c.slug());
      Path dir = out.resolve(c.slug());
      Directories.deleteRecursively(data);
      Directories.deleteRecursively(dir);
      Files.createDirectories(data);
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  javaBinary(),
                  "-Xms" + heap,
                  "-Xmx" + heap,
                  "-XX:-UsePerfData",
                  "--enable-native-access=ALL-UNNAMED",
                  "--sun-misc-unsafe-memory-access=allow",
                  "--add-opens=java.base/java.io=ALL-UNNAMED"));
      // For profiling, e.g. SEED_BENCH_CHILD_OPTS="-XX:StartFlightRecording=filename=/tmp/x.jfr"
      String childOpts = System.getenv("SEED_BENCH_CHILD_OPTS");
      if (childOpts != null && !childOpts.isBlank()) {
        cmd.addAll(List.of(childOpts.trim().replace("{config}", c.slug()).split("\\s+")));
      }
      cmd.addAll(
          List.of(
              "-cp",
              System.getProperty("java.class.path"),
              SeedRun.class.getName(),
              c.slug(),
              data.toString(),
              dir.toString(),
              Long.toString(keys),
              Integer.toString(warmupSeconds),
              Integer.toString(mixedSeconds),
              Integer.toString(threads),
              Long.toString(seed),
              quick ? "quick" : "full",
              burst.argument(),
              shaleConfig == null ? SeedRun.NO_SHALE_CONFIG : shaleConfig.toString()));
      MemoryCgroup group = null;
      if (cgroup) {
        MemoryCgroup.Result r = MemoryCgroup.create("shale-seed-bench-" + c.slug(), memory);
        if (r.group().isEmpty()) {
          System.out.println("seed-bench: " + r.description() + "; running without a memory limit");
          memoryNote = "not memory-limited: " + r.description();
        } else {
          group = r.group().get();
          memoryNote =
              "each engine's process in its own "
                  + (r.description().contains("v2") ? "cgroup v2" : "cgroup v1")
                  + " memory group limited to "
                  + ByteSize.format(memory)
                  + ", page cache included; JVM heap "
                  + ByteSize.format(heap);
          cmd = group.wrap(cmd);
        }
      }
      int exit;
      try {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        exit = p.waitFor();
        if (exit != 0) {
          String why =
              group != null && group.oomKilled()
                  ? " (killed by the memory limit of " + ByteSize.format(memory) + ")"
                  : "";
          LOG.error("seed-bench: " + c.label() + " failed with exit code " + exit + why);
          return 1;
        }
        RunResult r = RunResult.read(dir.resolve("result.properties"));
        results.add(group == null ? r : r.withMemory(memory, group.peakBytes()));
      } finally {
        if (group != null) {
          group.close();
        }
        if (!keepData) {
          Directories.deleteRecursively(data);
        }
      }
    }
    SeedReport report =
        new SeedReport(
            results,
            new SeedReport.Setup(
                quick,
                keys,
                dataBytes,
                memoryNote,
                warmupSeconds,
                mixedSeconds,
                threads,
                seed,
                burst.describe(),
                System.getProperty("shale.ops.revision", "unknown")));
    Files.writeString(out.resolve("seed-bench.md"), report.markdown());
    Files.writeString(out.resolve("seed-bench.csv"), report.csv());
    LatencyPlot.write(out.resolve("seed-bench.png"), out, configs);
    System.out.println();
    System.out.println(report.markdown());
    System.out.println(
        "seed-bench: wrote "
            + out.resolve("seed-bench.md")
            + ", "
            + out.resolve("seed-bench.csv")
            + " and "
            + out.resolve("seed-bench.png"));
    return 0;
  }

  private static String javaBinary() {
    return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  }
}
