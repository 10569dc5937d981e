package io.shale.ops.cluster;

import static io.shale.ops.ScriptArguments.callerPath;
import static io.shale.ops.ScriptArguments.need;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Shale (3 nodes) against etcd 3.4 (3 members), both as processes on this machine with their data
 * on the same disk, through the same closed-loop harness: for each value size and each concurrency,
 * {@code --seconds} of puts (random keys out of {@link #KEYS}, so values are overwritten) and then
 * {@code --seconds} of linearizable gets of keys loaded beforehand, each call timed into an
 * HdrHistogram after {@code --warmup-seconds}. Each system first gets unmeasured rounds over every
 * cell shape, at least {@code --jit-warmup-seconds} and until its rate settles (at most {@code
 * --max-warmup-seconds}); puts go to the leader, gets to every member in turn (as Shale's SDK and
 * etcd's clients send them); every cell runs {@code --repeats} times (passes over all cells),
 * reported as the mean with each run's rate; Shale runs all its passes, then etcd. Writes OUT.md
 * (throughput, P50, P99, Shale / etcd ratios, CPU per operation) and OUT.csv (one row per run);
 * options: {@code --help}. Method: docs/benchmarks.md, section "The cluster benchmark".
 */
public final class ClusterBench {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ClusterBench.class);

  /** Keys per run: overwritten by puts, all loaded before the gets. */
  static final int KEYS = 2_000;

  /**
   * Keys a range reads: consecutive ones from a random key, bounded by an end key on both systems
   * (etcd counts every key to a range's end, so a limit alone would make it read on).
   */
  static final int RANGE_KEYS = 10;

  private ClusterBench() {}

  /** One measured run of a cell. */
  record Cell(
      String system,
      String op,
      int valueBytes,
      int concurrency,
      long ops,
      double seconds,
      Histogram latency,
      long errors,
      CpuUsage.PerOp cpu,
      List<PutBreakdown.Stage> breakdown) {
    double opsPerSecond() {
      return ops / seconds;
    }

    double p50Ms() {
      return latency.getValueAtPercentile(50) / 1e6;
    }

    double p99Ms() {
      return latency.getValueAtPercentile(99) / 1e6;
    }
  }

  public static void main(String[] args) throws Exception {
    double seconds = 10;
    double warmup = 2;
    double jitWarmup = 120;
    double maxWarmup = 300;
    int repeats = 2;
    int[] sizes = {256, 16 << 10, 64 << 10};
    int[] concurrency = {1, 16, 128};
    List<String> systems = List.of("shale", "etcd");
    List<String> ops = List.of("put", "get", "txn");
    Path dir = Path.of(System.getProperty("java.io.tmpdir"), "shale-cluster-bench");
    Path out = callerPath("docs/cluster-bench");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--seconds" -> seconds = Double.parseDouble(need(args, ++i, "--seconds"));
        case "--warmup-seconds" -> warmup = Double.parseDouble(need(args, ++i, "--warmup-seconds"));
        case "--jit-warmup-seconds" ->
            jitWarmup = Double.parseDouble(need(args, ++i, "--jit-warmup-seconds"));
        case "--max-warmup-seconds" ->
            maxWarmup = Double.parseDouble(need(args, ++i, "--max-warmup-seconds"));
        case "--sizes" -> sizes = ints(need(args, ++i, "--sizes"));
        case "--concurrency" -> concurrency = ints(need(args, ++i, "--concurrency"));
        case "--repeats" -> repeats = Integer.parseInt(need(args, ++i, "--repeats"));
        case "--systems" -> systems = List.of(need(args, ++i, "--systems").split(","));
        case "--ops" -> ops = List.of(need(args, ++i, "--ops").split(","));
        case "--dir" -> dir = callerPath(need(args, ++i, "--dir"));
        case "--out" -> out = callerPath(need(args, ++i, "--out"));
        case "--quick" -> {
          seconds = 2;
          warmup = 0.5;
          jitWarmup = 5;
          maxWarmup = 5;
          sizes = new int[] {256, 16 << 10};
          concurrency = new int[] {1, 16};
          repeats = 1;
        }
        case "-h", "--help" -> {
          System.out.println(
              "usage: cluster-bench [--seconds S] [--warmup-seconds S] "
                  + "[--jit-warmup-seconds S] [--max-warmup-seconds S] [--sizes B,B] [--concurrency N,N] [--repeats N] "
                  + "[--systems shale,shale-tls,etcd] [--ops put,get,txn,range] [--dir DIR] "
                  + "[--out PREFIX] [--quick]");
          return;
        }
        default -> {
          LOG.error("cluster-bench: unknown argument '" + args[i] + "' (--help)");
          System.exit(2);
        }
      }
    }
    for (String op : ops) {
      if (!List.of("put", "get", "txn", "range").contains(op)) {
        LOG.error("cluster-bench: unknown operation '" + op + "' (put, get, txn, range)");
        System.exit(2);
      }
    }
    List<Cell> cells = new ArrayList<>();
    Map<String, long[]> coldStarts = new LinkedHashMap<>();
    Map<String, String> warmUps = new LinkedHashMap<>();
    String etcdVersion = "";
    Instant started = Instant.now();
    for (String system : systems) {
      Path data = dir.resolve(system);
      System.out.println("cluster-bench: starting " + system + " (data in " + data + ")");
      try (KvTarget target =
          switch (system) {
            case "shale" -> new ShaleTarget(data, "1g", channels(concurrency));
            case "shale-tls" -> new ShaleTarget(data, "1g", channels(concurrency), true);
            case "etcd" -> new EtcdTarget(data, channels(concurrency));
            default ->
                throw new IllegalArgumentException(
                    "unknown system " + system + " (shale, shale-tls, etcd)");
          }) {
        if (target instanceof EtcdTarget e) {
          etcdVersion = e.version;
        }
        if (target instanceof ShaleTarget shale) {
          System.out.printf(
              Locale.ROOT,
              "cluster-bench: %s nodes ready %d, %d, %d ms after their JVMs were launched%n",
              system,
              shale.readyMillis(0),
              shale.readyMillis(1),
              shale.readyMillis(2));
        }
        // Measured apart: how fast a freshly started cluster takes puts, second by second.
        coldStarts.put(system, coldStart(target));
        warmUps.put(system, warmUp(system, target, sizes, concurrency, ops, jitWarmup, maxWarmup));
        for (int pass = 0; pass < repeats; pass++) {
          for (int size : sizes) {
            // Puts first (they may find keys of another size), then every key at this size.
            if (ops.contains("put")) {
              for (int c : concurrency) {
                cells.add(run(system, "put", target, size, c, warmup, seconds));
              }
            }
            load(target, size);
            for (String op : ops) {
              if (op.equals("put")) {
                continue;
              }
              for (int c : concurrency) {
                cells.add(run(system, op, target, size, c, warmup, seconds));
              }
            }
          }
        }
      }
    }
    write(out, cells, seconds, warmup, started, etcdVersion, coldStarts, warmUps);
  }

  /**
   * A warm-up round's rates may differ from the previous round's by this much and count as settled:
   * once warm, rounds of 2 s cells on this 2-core machine still vary by up to about 8%.
   */
  static final double SETTLED = 0.10;

  /**
   * Unmeasured rounds over every cell shape (each size and concurrency, puts and gets, {@link
   * #WARMUP_CELL_SECONDS} each, less when {@code minSeconds} is short) until at least {@code
   * minSeconds} have passed and two rounds in a row have a geometric mean rate within {@link
   * #SETTLED} of the round before, or {@code maxSeconds} have passed. JVMs compile their hot paths
   * in their first minutes under load (on 2 cores shared by three nodes and the client, a cold
   * Shale node is several times slower than a warm one): a fixed warm-up left the first pass
   * measuring a half-warm cluster. etcd gets the same rounds.
   */
  private static String warmUp(
      String system,
      KvTarget target,
      int[] sizes,
      int[] concurrency,
      List<String> ops,
      double minSeconds,
      double maxSeconds)
      throws InterruptedException {
    long start = System.nanoTime();
    int shapesPerRound = sizes.length * concurrency.length * ops.size();
    // Short rounds when the warm-up is short (--quick), so that one round fits in it.
    double cellSeconds = Math.min(WARMUP_CELL_SECONDS, Math.max(0.25, minSeconds / shapesPerRound));
    WarmUpRounds rounds = new WarmUpRounds(minSeconds, maxSeconds, SETTLED);
    for (int round = 1; ; round++) {
      double logSum = 0;
      int shapes = 0;
      for (int size : sizes) {
        load(target, size);
        for (String op : ops) {
          for (int c : concurrency) {
            Cell cell = run(system, op, target, size, c, 0, cellSeconds);
            logSum += Math.log(Math.max(1, cell.opsPerSecond()));
            shapes++;
          }
        }
      }
      double mean = Math.exp(logSum / shapes);
      double elapsed = (System.nanoTime() - start) / 1e9;
      boolean done = rounds.record(mean, elapsed);
      double change = rounds.lastChange();
      System.out.printf(
          Locale.ROOT,
          "cluster-bench: %s warm-up round %d after %.0f s: geometric mean %.0f ops/s%s%n",
          system,
          round,
          elapsed,
          mean,
          Double.isNaN(change) ? "" : String.format(Locale.ROOT, " (%+.1f%%)", change * 100));
      if (done) {
        if (!rounds.isSettled() && maxSeconds > minSeconds) {
          LOG.warn(
              "cluster-bench: {} still changing at the end of its warm-up (--max-warmup-seconds)",
              system);
        }
        String summary = rounds.summary();
        System.out.println("cluster-bench: " + system + " warmed up: " + summary);
        return summary;
      }
    }
  }

  /** How an operation is named in the report. */
  static String describe(String op) {
    return switch (op) {
      case "get" -> "linearizable get";
      case "txn" -> "txn (if version > 0 then put else get)";
      case "range" -> "linearizable range of " + RANGE_KEYS + " keys";
      default -> op;
    };
  }

  /** Seconds of each cell shape in a warm-up round. */
  static final double WARMUP_CELL_SECONDS = 2;

  /** Seconds of puts measured right after a cluster is ready, one count per second. */
  static final int COLD_SECONDS = 10;

  /**
   * Puts of 256 B at 16 in flight from the moment the cluster is ready (its JVMs cold), counted
   * second by second: what a user's first seconds look like.
   */
  private static long[] coldStart(KvTarget target) throws InterruptedException {
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(COLD_SECONDS);
    java.util.concurrent.atomic.AtomicLongArray perSecond =
        new java.util.concurrent.atomic.AtomicLongArray(COLD_SECONDS);
    byte[] value = value(256, 7);
    Thread[] threads = new Thread[16];
    for (int t = 0; t < threads.length; t++) {
      int id = t;
      threads[t] =
          new Thread(
              () -> {
                SplittableRandom random = new SplittableRandom(id);
                for (long now; (now = System.nanoTime()) < end; ) {
                  try {
                    target.put(key(random.nextInt(KEYS)), value);
                  } catch (RuntimeException e) {
                    continue;
                  }
                  long done = System.nanoTime();
                  if (done < end) {
                    perSecond.incrementAndGet((int) ((done - start) / 1_000_000_000L));
                  }
                }
              },
              "cold-" + t);
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    long[] out = new long[COLD_SECONDS];
    for (int i = 0; i < COLD_SECONDS; i++) {
      out[i] = perSecond.get(i);
    }
    System.out.println("cluster-bench: cold start, puts per second: " + Arrays.toString(out));
    return out;
  }

  private static void waitUntil(long nanoTime) {
    for (long left; (left = nanoTime - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }

  private static int channels(int[] concurrency) {
    // One HTTP/2 connection per 32 concurrent calls, as a client library would pool them.
    return Math.max(1, Arrays.stream(concurrency).max().orElse(1) / 32);
  }

  private static int[] ints(String list) {
    return Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
  }

  static byte[] key(int i) {
    return String.format("bench-%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int size, long seed) {
    byte[] v = new byte[size];
    new SplittableRandom(seed).nextBytes(v); // incompressible, as etcd and Shale both store it
    return v;
  }

  /** Writes every key once with a value of {@code size}, so that every get finds one. */
  private static void load(KvTarget target, int size) throws InterruptedException {
    int threads = 16;
    CountDownLatch done = new CountDownLatch(threads);
    for (int t = 0; t < threads; t++) {
      int first = t;
      Thread w =
          new Thread(
              () -> {
                try {
                  for (int i = first; i < KEYS; i += threads) {
                    target.put(key(i), value(size, i));
                  }
                } finally {
                  done.countDown();
                }
              });
      w.start();
    }
    done.await();
  }

  private static Cell run(
      String system,
      String op,
      KvTarget target,
      int size,
      int concurrency,
      double warmup,
      double seconds)
      throws InterruptedException {
    long start = System.nanoTime();
    long measureFrom = start + (long) (warmup * 1e9);
    long end = measureFrom + (long) (seconds * 1e9);
    Histogram[] latencies = new Histogram[concurrency];
    AtomicLong errors = new AtomicLong();
    long[] counts = new long[concurrency];
    Thread[] threads = new Thread[concurrency];
    byte[][] values = new byte[8][];
    for (int i = 0; i < values.length; i++) {
      values[i] = value(size, 1000 + i);
    }
    for (int t = 0; t < concurrency; t++) {
      int id = t;
      latencies[t] = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
      threads[t] =
          new Thread(
              () -> {
                SplittableRandom random = new SplittableRandom(id * 7919L + size);
                while (true) {
                  int k = random.nextInt(KEYS);
                  long before = System.nanoTime();
                  if (before >= end) {
                    return;
                  }
                  try {
                    if (op.equals("put")) {
                      target.put(key(k), values[k & 7]);
                    } else if (op.equals("txn")) {
                      if (!target.txn(key(k), values[k & 7])) {
                        throw new IllegalStateException("the txn found no key " + k);
                      }
                    } else if (op.equals("range")) {
                      int from = Math.min(k, KEYS - RANGE_KEYS);
                      long bytes = target.range(key(from), key(from + RANGE_KEYS));
                      if (bytes != (long) RANGE_KEYS * size) {
                        throw new IllegalStateException(
                            "range from " + from + " returned " + bytes + " bytes");
                      }
                    } else if (target.get(key(k)) != size) {
                      throw new IllegalStateException("wrong value length for " + k);
                    }
                  } catch (RuntimeException e) {
                    if (errors.incrementAndGet() <= 3) {
                      LOG.error("cluster-bench: " + system + " " + op + ": " + e);
                    }
                    try {
                      Thread.sleep(10); // a failing system is not hammered
                    } catch (InterruptedException stop) {
                      return;
                    }
                    continue;
                  }
                  long after = System.nanoTime();
                  if (before >= measureFrom && after <= end) {
                    latencies[id].recordValue(
                        Math.min(after - before, TimeUnit.SECONDS.toNanos(60)));
                    counts[id]++;
                  }
                }
              },
              "bench-" + t);
      threads[t].start();
    }
    // CPU over exactly the measured window.
    waitUntil(measureFrom);
    CpuUsage.Sample cpuFrom = CpuUsage.sample(target.servers());
    int leader = target.leaderIndex();
    Map<String, Double> metersFrom = op.equals("put") ? target.meters(leader) : null;
    waitUntil(end);
    CpuUsage.Sample cpuTo = CpuUsage.sample(target.servers());
    List<PutBreakdown.Stage> breakdown = null;
    if (metersFrom != null) {
      Map<String, Double> metersTo = target.meters(leader);
      Map<String, Double> follower = target.meters((leader + 1) % 3);
      if (metersTo != null && follower != null) {
        breakdown = PutBreakdown.stages(metersFrom, metersTo, follower);
      }
    }
    for (Thread t : threads) {
      t.join();
    }
    Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    long ops = 0;
    for (int t = 0; t < concurrency; t++) {
      all.add(latencies[t]);
      ops += counts[t];
    }
    Cell c =
        new Cell(
            system,
            op,
            size,
            concurrency,
            ops,
            seconds,
            all,
            errors.get(),
            CpuUsage.between(cpuFrom, cpuTo, ops, target.leaderIndex()),
            breakdown);
    System.out.printf(
        Locale.ROOT,
        "cluster-bench: %-5s %-3s %6d B x%-3d %9.0f ops/s  P50 %7.2f ms"
            + "  P99 %7.2f ms  errors %d%n",
        system,
        op,
        size,
        concurrency,
        c.opsPerSecond(),
        c.p50Ms(),
        c.p99Ms(),
        c.errors());
    return c;
  }

  private static void write(
      Path out,
      List<Cell> cells,
      double seconds,
      double warmup,
      Instant started,
      String etcdVersion,
      Map<String, long[]> coldStarts,
      Map<String, String> warmUps)
      throws IOException {
    Map<String, List<Cell>> runs = new LinkedHashMap<>();
    for (Cell c : cells) {
      runs.computeIfAbsent(
              c.system() + "/" + c.op() + "/" + c.valueBytes() + "/" + c.concurrency(),
              k -> new ArrayList<>())
          .add(c);
    }
    Map<String, Cell> byKey = new LinkedHashMap<>();
    Map<String, String> spread = new LinkedHashMap<>();
    runs.forEach(
        (k, list) -> {
          byKey.put(k, merged(list));
          spread.put(k, spreadOf(list));
        });
    StringBuilder md = new StringBuilder();
    md.append("Cluster benchmark, ")
        .append(started.truncatedTo(ChronoUnit.SECONDS))
        .append(": 3 Shale nodes (revision ")
        .append(System.getProperty("shale.ops.revision", "?"))
        .append(") and 3 members of ")
        .append(etcdVersion.isEmpty() ? "etcd" : etcdVersion)
        .append(", local processes, same disk, fsync on; ")
        .append(fmt(seconds))
        .append(" s per cell after ")
        .append(fmt(warmup))
        .append(" s of warm-up; puts to each cluster's leader, gets to every member in turn; ")
        .append(runs.values().stream().mapToInt(List::size).max().orElse(1))
        .append(
            " runs per cell: ops/s is their mean, each run's rate in brackets, and latencies are"
                + " over all runs. Latencies in ms. Before measuring, unmeasured warm-up rounds over"
                + " every cell shape: ");
    warmUps.forEach((system, how) -> md.append(system).append(" ").append(how).append("; "));
    md.setLength(md.length() - 2);
    md.append(".\n\n");
    md.append(
        "| op | value | concurrency | Shale ops/s | etcd ops/s | Shale / etcd | Shale P50 "
            + "| etcd P50 | Shale P99 | etcd P99 | P99 etcd / Shale |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    StringBuilder csv =
        new StringBuilder(
            "system,op,value_bytes,concurrency,run,ops,seconds,"
                + "ops_per_second,p50_ms,p99_ms,p999_ms,max_ms,errors,"
                + "server_cpu_ms_per_1k,leader_cpu_ms_per_1k,client_cpu_ms_per_1k,host_idle_pct\n");
    Map<String, Integer> runNumbers = new LinkedHashMap<>();
    for (Cell c : cells) {
      int run =
          runNumbers.merge(
              c.system() + "/" + c.op() + "/" + c.valueBytes() + "/" + c.concurrency(),
              1,
              Integer::sum);
      csv.append(
          String.format(
              Locale.ROOT,
              "%s,%s,%d,%d,%d,%d,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%d,%.1f,%.1f,%.1f,%.1f%n",
              c.system(),
              c.op(),
              c.valueBytes(),
              c.concurrency(),
              run,
              c.ops(),
              c.seconds(),
              c.opsPerSecond(),
              c.p50Ms(),
              c.p99Ms(),
              c.latency().getValueAtPercentile(99.9) / 1e6,
              c.latency().getMaxValue() / 1e6,
              c.errors(),
              c.cpu().serversMs(),
              c.cpu().leaderMs(),
              c.cpu().clientMs(),
              c.cpu().hostIdlePercent()));
    }
    for (Map.Entry<String, Cell> entry : byKey.entrySet()) {
      Cell c = entry.getValue();
      if (!c.system().equals("shale")) {
        continue;
      }
      String etcdKey = "etcd/" + c.op() + "/" + c.valueBytes() + "/" + c.concurrency();
      Cell e = byKey.get(etcdKey);
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %.0f %s | %s | %s | %.2f | %s | %.2f " + "| %s | %s |%n",
              describe(c.op()),
              size(c.valueBytes()),
              c.concurrency(),
              c.opsPerSecond(),
              spread.get(entry.getKey()),
              e == null
                  ? "-"
                  : String.format(Locale.ROOT, "%.0f %s", e.opsPerSecond(), spread.get(etcdKey)),
              e == null
                  ? "-"
                  : String.format(Locale.ROOT, "%.2fx", c.opsPerSecond() / e.opsPerSecond()),
              c.p50Ms(),
              e == null ? "-" : String.format(Locale.ROOT, "%.2f", e.p50Ms()),
              c.p99Ms(),
              e == null ? "-" : String.format(Locale.ROOT, "%.2f", e.p99Ms()),
              e == null ? "-" : String.format(Locale.ROOT, "%.2fx", e.p99Ms() / c.p99Ms())));
    }
    if (cells.stream().anyMatch(c -> c.system().equals("shale-tls"))) {
      md.append(
          "\nShale with TLS and users on (shale-tls: every port in TLS, the client presents the"
              + " root user's certificate and every call is checked against its roles) vs Shale"
              + " insecure (shale), same cells:\n\n");
      md.append(
          "| op | value | concurrency | insecure ops/s | TLS ops/s | TLS / insecure "
              + "| insecure P50 | TLS P50 | insecure P99 | TLS P99 |\n");
      md.append("|---|---|---|---|---|---|---|---|---|---|\n");
      for (Cell t : byKey.values()) {
        Cell p = byKey.get("shale/" + t.op() + "/" + t.valueBytes() + "/" + t.concurrency());
        if (!t.system().equals("shale-tls") || p == null) {
          continue;
        }
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2f | %.2f |%n",
                describe(t.op()),
                size(t.valueBytes()),
                t.concurrency(),
                p.opsPerSecond(),
                t.opsPerSecond(),
                t.opsPerSecond() / p.opsPerSecond(),
                p.p50Ms(),
                t.p50Ms(),
                p.p99Ms(),
                t.p99Ms()));
      }
    }
    md.append(
        "\nCPU-ms per 1,000 operations in the measured window (servers: the three processes"
            + " together; leader: the one puts go to), and the host's idle CPU, means over the"
            + " runs:\n\n");
    md.append("| system | op | value | concurrency | servers | leader | client | host idle |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    for (Cell c : byKey.values()) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %d | %.0f | %.0f | %.0f | %.0f%% |%n",
              c.system(),
              c.op(),
              size(c.valueBytes()),
              c.concurrency(),
              c.cpu().serversMs(),
              c.cpu().leaderMs(),
              c.cpu().clientMs(),
              c.cpu().hostIdlePercent()));
    }
    List<Cell> broken = byKey.values().stream().filter(c -> c.breakdown() != null).toList();
    if (!broken.isEmpty()) {
      md.append(
          "\nWhere a put's time goes, from the nodes' own meters (ms; the leader's gRPC time, slot"
              + " wait and writes per entry over the last run's window, Ratis's timers as their"
              + " recent means; a follower's columns from one follower):\n\n");
      md.append("| system | value | concurrency | client P50 |");
      for (PutBreakdown.Stage st : broken.get(0).breakdown()) {
        md.append(" ").append(st.stage()).append(" (").append(st.where()).append(") |");
      }
      md.append("\n|---|---|---|---|");
      md.append("---|".repeat(broken.get(0).breakdown().size())).append("\n");
      for (Cell c : broken) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d | %.2f |",
                c.system(),
                size(c.valueBytes()),
                c.concurrency(),
                c.p50Ms()));
        for (PutBreakdown.Stage st : c.breakdown()) {
          md.append(" ").append(PutBreakdown.format(st)).append(" |");
        }
        md.append("\n");
      }
    }
    if (!coldStarts.isEmpty()) {
      md.append(
          "\nCold start: puts of 256 B at 16 in flight in each of the first "
              + COLD_SECONDS
              + " s after the cluster was ready (its processes just started), against the steady"
              + " rate of the same cell measured later:\n\n");
      md.append("| system | puts in second 1, 2, ... | steady puts/s | first second at 80% |\n");
      md.append("|---|---|---|---|\n");
      for (Map.Entry<String, long[]> e : coldStarts.entrySet()) {
        Cell steady = byKey.get(e.getKey() + "/put/256/16");
        int reached = -1;
        for (int i = 0; steady != null && i < e.getValue().length; i++) {
          if (e.getValue()[i] >= 0.8 * steady.opsPerSecond()) {
            reached = i + 1;
            break;
          }
        }
        md.append("| ")
            .append(e.getKey())
            .append(" | ")
            .append(
                String.join(", ", Arrays.stream(e.getValue()).mapToObj(Long::toString).toList()))
            .append(" | ")
            .append(
                steady == null ? "-" : String.format(Locale.ROOT, "%.0f", steady.opsPerSecond()))
            .append(" | ")
            .append(reached < 0 ? "not within " + COLD_SECONDS + " s" : reached + " s")
            .append(" |\n");
      }
    }
    long errors = cells.stream().mapToLong(Cell::errors).sum();
    md.append("\nFailed calls (not in the figures): ").append(errors).append(".\n");
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(Path.of(out + ".md"), md);
    Files.writeString(Path.of(out + ".csv"), csv);
    System.out.println("cluster-bench: wrote " + out + ".md and " + out + ".csv");
    System.out.print(md);
  }

  /**
   * The runs of one cell as one: their operations and seconds summed, latencies merged, CPU means.
   */
  private static Cell merged(List<Cell> runs) {
    Cell first = runs.get(0);
    Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    long ops = 0;
    double seconds = 0;
    long errors = 0;
    double servers = 0;
    double leader = 0;
    double client = 0;
    double idle = 0;
    for (Cell c : runs) {
      latency.add(c.latency());
      ops += c.ops();
      seconds += c.seconds();
      errors += c.errors();
      servers += c.cpu().serversMs();
      leader += c.cpu().leaderMs();
      client += c.cpu().clientMs();
      idle += c.cpu().hostIdlePercent();
    }
    int n = runs.size();
    return new Cell(
        first.system(),
        first.op(),
        first.valueBytes(),
        first.concurrency(),
        ops,
        seconds,
        latency,
        errors,
        new CpuUsage.PerOp(servers / n, leader / n, client / n, idle / n),
        runs.get(n - 1).breakdown());
  }

  /** Each run's rate, as "[a, b]" (empty for a single run). */
  private static String spreadOf(List<Cell> runs) {
    if (runs.size() < 2) {
      return "";
    }
    StringBuilder b = new StringBuilder("[");
    for (Cell c : runs) {
      b.append(b.length() > 1 ? ", " : "")
          .append(String.format(Locale.ROOT, "%.0f", c.opsPerSecond()));
    }
    return b.append("]").toString();
  }

  private static String size(int bytes) {
    return bytes % 1024 == 0 ? (bytes / 1024) + " KiB" : bytes + " B";
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
  }
}
