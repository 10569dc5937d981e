package io.shale.ops.seed;

import io.shale.ops.bench.GcPauses;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * One configuration's run of the seed benchmark, in its own JVM (so that {@link SeedBench} can hold
 * it to a memory limit): load, settle, the timed mixed phase, then single-threaded probes. Writes
 * {@code result.properties}, {@code seconds.csv} (one row per second of the mixed phase) and {@code
 * compactions.csv} (intervals with a compaction running) into its output directory.
 *
 * <p>Arguments: {@code config dataDir outDir keys warmupSeconds mixedSeconds threads seed
 * full|quick burst} ({@link BurstSettings#argument}). The warm-up runs the same mix on other
 * request streams before the timed phase and is not measured: it fills the caches and the JIT after
 * the load, as a running store has them.
 */
public final class SeedRun {
  private static final long MAX_LATENCY_NANOS = 120_000_000_000L;
  private static final int LOAD_BATCH = 32;
  private static final int LOCK_STRIPES = 1024;

  private final SeedConfig config;
  private final Path dataDir;
  private final Path outDir;
  private final long keys;
  private final int warmupSeconds;
  private final int mixedSeconds;
  private final int threads;
  private final long seed;
  private final BenchScale scale;
  private final ValueSource values;
  private final BurstSettings burst;

  /** The last argument when Shale runs with the seed's settings alone. */
  static final String NO_SHALE_CONFIG = "-";

  private final String shaleConfig; // TOML over Shale's seed settings, or null

  /** Live value size of each initial key (-1 once deleted); guarded by the key's stripe lock. */
  private final int[] liveSizes;

  private final Object[] stripes = new Object[LOCK_STRIPES];
  private final LongAdder insertedBytes = new LongAdder();
  private final LongAdder userBytes = new LongAdder();
  private final long started = System.nanoTime();

  private SeedRun(String[] a) throws IOException {
    this.config = SeedConfig.ofSlug(a[0]);
    this.dataDir = Paths.get(a[1]);
    this.outDir = Paths.get(a[2]);
    this.keys = Long.parseLong(a[3]);
    this.warmupSeconds = Integer.parseInt(a[4]);
    this.mixedSeconds = Integer.parseInt(a[5]);
    this.threads = Integer.parseInt(a[6]);
    this.seed = Long.parseLong(a[7]);
    this.scale = a[8].equals("quick") ? BenchScale.QUICK : BenchScale.FULL;
    this.values = new ValueSource(seed);
    this.burst = BurstSettings.ofArgument(a[9]);
    this.shaleConfig = a[10].equals(NO_SHALE_CONFIG) ? null : Files.readString(Path.of(a[10]));
    this.liveSizes = new int[Math.toIntExact(keys)];
    for (int i = 0; i < LOCK_STRIPES; i++) {
      stripes[i] = new Object();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 11) {
      System.out.println(
          "usage: SeedRun config dataDir outDir keys warmupSeconds mixedSeconds "
              + "threads seed full|quick none|period,length,bytesPerSecond shaleToml|-");
      System.exit(2);
    }
    new SeedRun(args).run();
    // RocksDB's and the engine's background threads must not keep the JVM alive.
    System.exit(0);
  }

  private void log(String format, Object... args) {
    System.out.printf(
        Locale.ROOT,
        "[%-7s %6.1fs] %s%n",
        config.slug(),
        (System.nanoTime() - started) / 1e9,
        String.format(Locale.ROOT, format, args));
  }

  private void run() throws Exception {
    Files.createDirectories(outDir);
    try (SeedStore store = config.open(dataDir, scale, shaleConfig)) {
      // Load.
      long t0 = System.nanoTime();
      long loadBytes = load(store);
      double loadSeconds = (System.nanoTime() - t0) / 1e9;
      log(
          "load: %,d keys, %,d MiB in %.1f s (%.1f MiB/s); %s",
          keys, loadBytes >> 20, loadSeconds, (loadBytes >> 20) / loadSeconds, store.shape());
      // Settle: every configuration starts the mixed phase with no compaction debt from the load.
      t0 = System.nanoTime();
      boolean settled = store.settle(Duration.ofSeconds(scale == BenchScale.QUICK ? 20 : 180));
      double settleSeconds = (System.nanoTime() - t0) / 1e9;
      log(
          "settle: %s after %.1f s; %s",
          settled ? "idle" : "still compacting", settleSeconds, store.shape());
      // Warm-up, then the timed mixed phase.
      if (warmupSeconds > 0) {
        new Mixed(store, warmupSeconds, false).run();
      }
      SeedStore.Counters before = store.counters();
      ProcIo ioBefore = ProcIo.now();
      Mixed m = new Mixed(store, mixedSeconds, true);
      m.run();
      SeedStore.Counters after = store.counters();
      ProcIo ioAfter = ProcIo.now();
      SeedStore.FileReadBytes fileReads = after.fileReads().since(before.fileReads());
      long diskBytes = SeedStore.diskBytes(dataDir);
      long residentBytes = residentBytes();
      log("mixed: done; %s", store.shape());
      // Probes, single-threaded on a quiet store.
      SeedWorkload w = new SeedWorkload(keys, seed);
      Probe hot = probe(store, w, true);
      Probe all = probe(store, w, false);
      log(
          "probe: hot ranges %.2f tables touched (%.2f probed) per read, all keys %.2f; %,d values checked",
          hot.touched, hot.probed, all.touched, hot.checked + all.checked);
      ProcIo ioEnd = ProcIo.now();
      RunResult r =
          new RunResult(
              config.slug(),
              keys,
              loadBytes,
              loadSeconds,
              settled,
              settleSeconds,
              m.seconds,
              m.ops.sum(),
              m.readsTotal.getTotalCount(),
              m.misses.sum(),
              m.scansTotal.getTotalCount(),
              m.writesTotal.getTotalCount(),
              micros(m.readsTotal, 50),
              micros(m.readsTotal, 99),
              micros(m.readsTotal, 99.9),
              micros(m.readsOutsideTotal, 99),
              micros(m.readsDuringTotal, 99),
              m.readsDuringTotal.getTotalCount(),
              micros(m.scansTotal, 99),
              micros(m.writesTotal, 99),
              (double) m.pollsCompacting / Math.max(1, m.polls),
              m.intervals.size(),
              after.compactedBytes() - before.compactedBytes(),
              after.filterIndexBytes(),
              after.throttled(),
              after.stallMicros(),
              userBytes.sum(),
              ioEnd.written(),
              ioAfter.bytesRead() - ioBefore.bytesRead(),
              fileReads.pointReads(),
              fileReads.scans(),
              fileReads.background(),
              diskBytes,
              liveBytes(),
              hot.touched,
              hot.probed,
              all.touched,
              hot.checked + all.checked,
              residentBytes,
              0,
              0,
              micros(m.readsBurstTotal, 99),
              m.readsBurstTotal.getTotalCount(),
              m.burstBytes.sum(),
              micros(m.burstWritesTotal, 99),
              m.secondsWithoutOps,
              m.gcMillis,
              micros(m.readsOutsideTotal, 99.9),
              micros(m.readsDuringTotal, 99.9),
              m.readsTotal.getTotalCount() == 0 ? 0 : m.readsTotal.getMaxValue() / 1000.0);
      r.write(outDir.resolve("result.properties"));
      m.writeIntervals(outDir.resolve("compactions.csv"));
    }
  }

  private static double micros(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
  }

  private Object stripe(long key) {
    return stripes[(int) (key % LOCK_STRIPES)];
  }

  // ---------------------------------------------------------------------------------------------
  // Load

  /** Puts every initial key once, in a scattered order (so that compaction has real work). */
  private long load(SeedStore store) throws Exception {
    long stride = 1_000_003;
    while (gcd(stride, keys) != 1) {
      stride += 2;
    }
    long bytes = 0;
    long lastLog = System.nanoTime();
    long lastBytes = 0;
    byte[][] k = new byte[LOAD_BATCH][];
    byte[][] v = new byte[LOAD_BATCH][];
    int inBatch = 0;
    for (long i = 0; i < keys; i++) {
      long n = Math.floorMod(i * stride + seed, keys);
      int size = SeedWorkload.loadValueSize(n, seed);
      liveSizes[(int) n] = size;
      k[inBatch] = SeedWorkload.key(n);
      v[inBatch] = values.value(n, 0, size);
      bytes += SeedWorkload.KEY_BYTES + size;
      if (++inBatch == LOAD_BATCH || i == keys - 1) {
        store.putAll(
            inBatch == LOAD_BATCH ? k : java.util.Arrays.copyOf(k, inBatch),
            inBatch == LOAD_BATCH ? v : java.util.Arrays.copyOf(v, inBatch));
        inBatch = 0;
      }
      long now = System.nanoTime();
      if (now - lastLog > 5_000_000_000L) {
        log(
            "load: %,d of %,d keys, %,d MiB, %.1f MiB/s, L0 %d files",
            i + 1,
            keys,
            bytes >> 20,
            ((bytes - lastBytes) >> 20) / ((now - lastLog) / 1e9),
            store.level0Files());
        lastLog = now;
        lastBytes = bytes;
      }
    }
    userBytes.add(bytes);
    return bytes;
  }

  private static long gcd(long a, long b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  private long liveBytes() {
    long live = insertedBytes.sum();
    for (int s : liveSizes) {
      if (s >= 0) {
        live += SeedWorkload.KEY_BYTES + s;
      }
    }
    return live;
  }

  // ---------------------------------------------------------------------------------------------
  // Mixed phase

  /** The timed phase: client threads, a per-second sampler and a compaction poller. */
  private final class Mixed {
    private final SeedStore store;
    private final Recorder reads = new Recorder(MAX_LATENCY_NANOS, 3);
    private final Recorder readsDuring = new Recorder(MAX_LATENCY_NANOS, 3);
    private final Recorder readsOutside = new Recorder(MAX_LATENCY_NANOS, 3);
    private final Recorder scans = new Recorder(MAX_LATENCY_NANOS, 3);
    private final Recorder writes = new Recorder(MAX_LATENCY_NANOS, 3);
    final Histogram readsTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final Histogram readsDuringTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final Histogram readsOutsideTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final Histogram scansTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final Histogram writesTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    private final Recorder readsBurst = new Recorder(MAX_LATENCY_NANOS, 3);
    private final Recorder burstWrites = new Recorder(MAX_LATENCY_NANOS, 3);
    final Histogram readsBurstTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final Histogram burstWritesTotal = new Histogram(MAX_LATENCY_NANOS, 3);
    final LongAdder burstBytes = new LongAdder();

    /** Seconds of the phase in which the clients completed no operation at all. */
    long secondsWithoutOps;

    /** Time the JVM's collectors spent during the phase (pauses and concurrent work). */
    long gcMillis;

    private volatile boolean bursting;
    final LongAdder ops = new LongAdder();
    final LongAdder misses = new LongAdder();

    /** [start, end) milliseconds into the phase during which a compaction ran. */
    final List<long[]> intervals = new ArrayList<>();

    long polls;
    long pollsCompacting;
    double seconds;
    private volatile boolean compacting;
    private volatile boolean stop;
    private volatile Throwable failure;
    private long phaseStart;
    private final int length;

    /** False for the warm-up: other request streams, nothing written, logged as warm-up. */
    private final boolean timed;

    Mixed(SeedStore store, int length, boolean timed) {
      this.store = store;
      this.length = length;
      this.timed = timed;
    }

    void run() throws Exception {
      phaseStart = System.nanoTime();
      long end = phaseStart + length * 1_000_000_000L;
      List<Thread> clients = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        // Same seeds in every configuration: the same request stream per client thread. The
        // warm-up's streams and inserted keys are others (its inserts start 5e9 further on).
        long streamSeed = seed * 1_000 + t + (timed ? 0 : 500);
        long insertBase = keys + t * 10_000_000_000L + (timed ? 0 : 5_000_000_000L);
        SeedWorkload w = new SeedWorkload(keys, streamSeed, insertBase);
        Thread th = new Thread(() -> client(w), "client-" + t);
        th.start();
        clients.add(th);
      }
      Thread poller = new Thread(this::poll, "compaction-poller");
      poller.setDaemon(true);
      poller.start();
      Thread burster = null;
      if (timed && burst.enabled()) {
        burster = new Thread(this::burst, "burst-writer");
        burster.start();
      }
      long gcBefore = GcPauses.millisSoFar();
      Path csvFile = outDir.resolve(timed ? "seconds.csv" : "warmup-seconds.csv");
      try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(csvFile))) {
        csv.println(
            "second,ops,reads,read_p50_us,read_p99_us,write_p99_us,compacting_share,level0_files,"
                + "burst_bytes,in_burst");
        long next = phaseStart;
        long lastOps = 0;
        long lastPolls = 0;
        long lastCompacting = 0;
        long lastBurstBytes = 0;
        for (int second = 1; second <= length && failure == null; second++) {
          next += 1_000_000_000L;
          sleepUntil(Math.min(next, end));
          Histogram r = reads.getIntervalHistogram();
          Histogram w = writes.getIntervalHistogram();
          readsTotal.add(r);
          writesTotal.add(w);
          scansTotal.add(scans.getIntervalHistogram());
          readsDuringTotal.add(readsDuring.getIntervalHistogram());
          readsOutsideTotal.add(readsOutside.getIntervalHistogram());
          readsBurstTotal.add(readsBurst.getIntervalHistogram());
          burstWritesTotal.add(burstWrites.getIntervalHistogram());
          long o = ops.sum();
          if (o == lastOps) {
            secondsWithoutOps++;
          }
          long b = burstBytes.sum();
          long p;
          long pc;
          synchronized (this) {
            p = polls;
            pc = pollsCompacting;
          }
          double share = p == lastPolls ? 0 : (double) (pc - lastCompacting) / (p - lastPolls);
          int l0 = store.level0Files();
          csv.printf(
              Locale.ROOT,
              "%d,%d,%d,%.1f,%.1f,%.1f,%.2f,%d,%d,%d%n",
              second,
              o - lastOps,
              r.getTotalCount(),
              micros(r, 50),
              micros(r, 99),
              micros(w, 99),
              share,
              l0,
              b - lastBurstBytes,
              timed && burst.inWindow((second - 1) * 1000L) ? 1 : 0);
          lastBurstBytes = b;
          if (second % 5 == 0 || second == length) {
            log(
                "%s: %3d/%d s, %,8.0f ops/s, read p99 %.2f ms, compacting %3.0f%%, L0 %d files",
                timed ? "mixed" : "warm-up",
                second,
                length,
                (o - lastOps) * 1.0,
                micros(r, 99) / 1000,
                share * 100,
                l0);
          }
          lastOps = o;
          lastPolls = p;
          lastCompacting = pc;
        }
      } finally {
        stop = true;
        for (Thread th : clients) {
          th.join();
        }
        poller.join();
        if (burster != null) {
          burster.join();
        }
      }
      seconds = (System.nanoTime() - phaseStart) / 1e9;
      gcMillis = GcPauses.millisSoFar() - gcBefore;
      readsBurstTotal.add(readsBurst.getIntervalHistogram());
      burstWritesTotal.add(burstWrites.getIntervalHistogram());
      // What finished after the last sample.
      readsTotal.add(reads.getIntervalHistogram());
      writesTotal.add(writes.getIntervalHistogram());
      scansTotal.add(scans.getIntervalHistogram());
      readsDuringTotal.add(readsDuring.getIntervalHistogram());
      readsOutsideTotal.add(readsOutside.getIntervalHistogram());
      if (failure != null) {
        throw new IllegalStateException("a client failed", failure);
      }
    }

    private void sleepUntil(long deadline) throws InterruptedException {
      long wait;
      while ((wait = deadline - System.nanoTime()) > 0) {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
    }

    private void poll() {
      long openedAt = -1;
      try {
        while (!stop) {
          boolean c = store.compacting();
          long ms = (System.nanoTime() - phaseStart) / 1_000_000;
          compacting = c;
          synchronized (this) {
            polls++;
            if (c) {
              pollsCompacting++;
            }
          }
          if (c && openedAt < 0) {
            openedAt = ms;
          } else if (!c && openedAt >= 0) {
            intervals.add(new long[] {openedAt, ms});
            openedAt = -1;
          }
          Thread.sleep(50);
        }
      } catch (Exception e) {
        failure = e;
      }
      if (openedAt >= 0) {
        intervals.add(new long[] {openedAt, (System.nanoTime() - phaseStart) / 1_000_000});
      }
    }

    private void client(SeedWorkload w) {
      try {
        long version = 1;
        while (!stop) {
          SeedWorkload.Op op = w.next();
          byte[] key = SeedWorkload.key(op.key());
          long t0 = System.nanoTime();
          switch (op.kind()) {
            case GET, GET_HOT -> {
              byte[] v = store.get(key);
              long nanos = Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS);
              reads.recordValue(nanos);
              (compacting ? readsDuring : readsOutside).recordValue(nanos);
              if (bursting) {
                readsBurst.recordValue(nanos);
              }
              if (v == null) {
                misses.increment();
              }
            }
            case SCAN -> {
              store.scan(key, op.scanLength());
              scans.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
            }
            case OVERWRITE -> {
              byte[] v = values.value(op.key(), version++, op.valueSize());
              t0 = System.nanoTime();
              synchronized (stripe(op.key())) {
                store.put(key, v);
                liveSizes[(int) op.key()] = op.valueSize();
              }
              writes.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
              userBytes.add(key.length + v.length);
            }
            case INSERT -> {
              byte[] v = values.value(op.key(), 0, op.valueSize());
              t0 = System.nanoTime();
              store.put(key, v);
              writes.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
              insertedBytes.add(key.length + v.length);
              userBytes.add(key.length + v.length);
            }
            case DELETE -> {
              synchronized (stripe(op.key())) {
                store.delete(key);
                liveSizes[(int) op.key()] = -1;
              }
              writes.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
              userBytes.add(key.length);
            }
          }
          ops.increment();
        }
      } catch (Throwable e) {
        failure = e;
        stop = true;
      }
    }

    /**
     * The burst writer: overwrites inside each burst window, at the configured rate or as fast as
     * the store takes them, with the same bookkeeping as a client's overwrite (so the probes check
     * what it wrote); sleeps between windows.
     */
    private void burst() {
      SeedWorkload w = new SeedWorkload(keys, seed * 1_000 + 999);
      long version = 1L << 40; // apart from the clients' versions
      try {
        while (!stop) {
          long ms = (System.nanoTime() - phaseStart) / 1_000_000;
          if (!burst.inWindow(ms)) {
            bursting = false;
            long wait = burst.nextWindowStart(ms) - ms;
            Thread.sleep(Math.max(1, Math.min(wait, 200)));
            continue;
          }
          bursting = true;
          SeedWorkload.Op op = w.nextOverwrite();
          byte[] key = SeedWorkload.key(op.key());
          byte[] v = values.value(op.key(), version++, op.valueSize());
          long t0 = System.nanoTime();
          synchronized (stripe(op.key())) {
            store.put(key, v);
            liveSizes[(int) op.key()] = op.valueSize();
          }
          burstWrites.recordValue(Math.min(System.nanoTime() - t0, MAX_LATENCY_NANOS));
          burstBytes.add(key.length + v.length);
          userBytes.add(key.length + v.length);
          if (burst.bytesPerSecond() > 0) {
            // Paced within the window: the bytes written so far in it set the earliest next write.
            long windowStart = ms - ms % (burst.periodSeconds() * 1000L);
            long due =
                phaseStart
                    + windowStart * 1_000_000
                    + (long)
                        (burstBytesInWindow(windowStart, key.length + v.length)
                            * 1e9
                            / burst.bytesPerSecond());
            sleepUntil(due);
          }
        }
      } catch (Throwable e) {
        failure = e;
        stop = true;
      } finally {
        bursting = false;
      }
    }

    private long windowOfBytes = -1;
    private long bytesInWindow;

    /**
     * Bytes the burst writer wrote in the window starting at {@code windowStart} ms, this one
     * included.
     */
    private long burstBytesInWindow(long windowStart, int written) {
      if (windowOfBytes != windowStart) {
        windowOfBytes = windowStart;
        bytesInWindow = 0;
      }
      bytesInWindow += written;
      return bytesInWindow;
    }

    void writeIntervals(Path file) throws IOException {
      try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
        csv.println("start_ms,end_ms");
        for (long[] i : intervals) {
          csv.println(i[0] + "," + i[1]);
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Probes

  private record Probe(double touched, double probed, long checked) {}

  /**
   * Point reads of random keys, in the hot (delete-heavy) ranges or over all initial keys, on a
   * store no client writes to: tables touched and filters probed per read, from the store's
   * counters; every answer checked against the live sizes the load and mixed phases recorded.
   */
  private Probe probe(SeedStore store, SeedWorkload w, boolean hotOnly) throws Exception {
    int n = scale == BenchScale.QUICK ? 2_000 : 20_000;
    SplittableRandom rnd = new SplittableRandom(seed ^ (hotOnly ? 0x401 : 0x402));
    long[][] hot = w.hotRanges();
    SeedStore.Counters c0 = store.counters();
    long checked = 0;
    for (int i = 0; i < n; i++) {
      long k;
      if (hotOnly) {
        long[] r = hot[rnd.nextInt(hot.length)];
        k = r[0] + rnd.nextLong(r[1] - r[0]);
      } else {
        k = rnd.nextLong(keys);
      }
      byte[] v = store.get(SeedWorkload.key(k));
      int expected = liveSizes[(int) k];
      String wrong =
          v == null
              ? (expected < 0 ? null : "key " + k + " is missing")
              : expected < 0 ? "deleted key " + k + " was found" : ValueSource.check(k, v);
      if (wrong == null && v != null && v.length != expected) {
        wrong = "key " + k + " has a " + v.length + "-byte value, the last write was " + expected;
      }
      if (wrong != null) {
        throw new IllegalStateException(config.label() + " returned a wrong answer: " + wrong);
      }
      checked++;
    }
    SeedStore.Counters c1 = store.counters();
    return new Probe(
        (double) (c1.filterPasses() - c0.filterPasses()) / n,
        (double) (c1.filterProbes() - c0.filterProbes()) / n,
        checked);
  }

  /** This process's resident memory (heap and native, not page cache), from /proc/self/status. */
  private static long residentBytes() {
    try {
      for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return 0;
  }

  /** This process's storage I/O so far, from /proc/self/io (zero where it cannot be read). */
  private record ProcIo(long bytesRead, long bytesWritten, long cancelled) {
    long written() {
      return bytesWritten - cancelled;
    }

    static ProcIo now() {
      long r = 0;
      long w = 0;
      long c = 0;
      try {
        for (String line : Files.readAllLines(Paths.get("/proc/self/io"))) {
          String[] kv = line.split(":\\s*");
          switch (kv[0]) {
            case "read_bytes" -> r = Long.parseLong(kv[1].trim());
            case "write_bytes" -> w = Long.parseLong(kv[1].trim());
            case "cancelled_write_bytes" -> c = Long.parseLong(kv[1].trim());
            default -> {}
          }
        }
      } catch (IOException | RuntimeException e) {
        // not Linux, or no I/O accounting: amplification shows as 0
      }
      return new ProcIo(r, w, c);
    }
  }
}
