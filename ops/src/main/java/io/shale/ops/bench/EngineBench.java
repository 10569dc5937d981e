package io.shale.ops.bench;

import static io.shale.ops.ScriptArguments.callerPath;
import static io.shale.ops.ScriptArguments.need;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.EngineStats;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.WriteBatch;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.ops.Directories;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * Shale engine versus RocksDB (rocksdbjni), configured alike (the constants below), in one JVM, on
 * the same request sequences: fill (one key per write: a Shale {@code apply}, a RocksDB put with
 * the WAL off), settle (flush, compact the whole range, wait), then gets of present keys, gets of
 * absent keys and 100-entry scans, single-threaded.
 *
 * <p>Fairness: both engines draw the same requests (same seeds); each read workload is split into
 * slices alternating Shale, RocksDB, RocksDB, Shale, ... so that load from other processes falls on
 * both alike, after an unrecorded warm-up per engine. Workloads, timing and the configuration
 * table: docs/benchmarks.md, section "The engine micro-benchmark".
 */
public final class EngineBench {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EngineBench.class);

  static final long MIB = 1L << 20;
  static final int KEY_BYTES = 16;
  static final int VALUE_BYTES = 100;
  static final int SCAN_LENGTH = 100;

  // The configuration both engines share.
  static final long MEMTABLE_BYTES = 64 * MIB;
  static final int IMMUTABLE_MEMTABLES = 2; // RocksDB: max_write_buffer_number = 1 + this
  static final long BLOCK_CACHE_BYTES = 64 * MIB;
  static final int BLOCK_BYTES = 4096;
  static final int RESTART_INTERVAL = 16;
  static final int BLOOM_BITS_PER_KEY = 10;
  static final int L0_TRIGGER = 4;
  static final long LEVEL_BASE_BYTES = 256 * MIB;
  static final int LEVEL_MULTIPLIER = 10;
  static final long TARGET_FILE_BYTES = 64 * MIB;
  static final int NUM_LEVELS = 7;
  static final int MAX_OPEN_FILES = 1000;

  private static final int SOURCE_BYTES = 1 << 20;
  private static final long START = System.nanoTime();

  private final Args args;
  private final long keySalt;
  private final byte[] source;

  private EngineBench(Args args) {
    this.args = args;
    this.keySalt = mix64(args.seed ^ 0x5DEECE66DL);
    this.source = CompressibleBytes.source(new SplittableRandom(args.seed), SOURCE_BYTES);
  }

  public static void main(String[] argv) throws Exception {
    Args a;
    try {
      a = Args.parse(argv);
    } catch (IllegalArgumentException e) {
      LOG.error("engine-bench: " + e.getMessage());
      System.out.println(Args.USAGE);
      System.exit(2);
      return;
    }
    if (a.help) {
      System.out.println(Args.USAGE);
      return;
    }
    new EngineBench(a).run();
  }

  // ---------------------------------------------------------------------------------------------
  // The two engines behind one interface

  interface Store extends AutoCloseable {
    String name();

    void put(byte[] key, byte[] value) throws Exception;

    byte[] get(byte[] key) throws Exception;

    /** Read up to {@code n} entries forward from {@code from}; returns how many. */
    int scan(byte[] from, int n, long[] sink) throws Exception;

    /** Flush, compact everything, wait for background work to finish. */
    void settle() throws Exception;

    /** Level shape and memory, for the report. */
    String describe() throws Exception;

    long diskBytes() throws Exception;

    @Override
    void close() throws Exception;
  }

  static EngineOptions shaleOptions(Compression c, boolean mmapReads) {
    return EngineOptions.defaults()
        .withMemtableSize(MEMTABLE_BYTES)
        .withMaxImmutableMemtables(IMMUTABLE_MEMTABLES)
        .withBlockCache(BLOCK_CACHE_BYTES)
        .withMaxOpenFiles(MAX_OPEN_FILES)
        .withMmapReads(mmapReads)
        .withTable(new TableWriteOptions(BLOCK_BYTES, RESTART_INTERVAL, c))
        .withBloom(BloomPolicy.uniform(BLOOM_BITS_PER_KEY))
        .withCompaction(
            new CompactionOptions(
                L0_TRIGGER,
                LEVEL_MULTIPLIER,
                LEVEL_BASE_BYTES,
                true,
                TARGET_FILE_BYTES,
                NUM_LEVELS,
                1,
                CompactionScore.SEED));
  }

  static final class ShaleStore implements Store {
    private final Engine engine;
    private long index;

    /** Writes refused at a stop threshold and retried after the hint (RocksDB stalls instead). */
    private long throttled;

    private static void sleep(java.time.Duration d) {
      try {
        Thread.sleep(Math.max(1, d.toMillis()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    ShaleStore(Path dir, Compression c, boolean mmapReads) throws IOException {
      this.engine = Engine.open(dir, shaleOptions(c, mmapReads));
      this.index = engine.lastAppliedIndex();
    }

    @Override
    public String name() {
      return "Shale";
    }

    @Override
    public void put(byte[] key, byte[] value) {
      WriteBatch batch = new WriteBatch().put(key, value);
      long i = ++index;
      while (true) {
        try {
          engine.apply(batch, i);
          return;
        } catch (io.shale.engine.pressure.WriteThrottledException e) {
          throttled++;
          sleep(e.retryAfter());
        }
      }
    }

    @Override
    public byte[] get(byte[] key) {
      return engine.get(key);
    }

    @Override
    public int scan(byte[] from, int n, long[] sink) {
      int got = 0;
      try (ScanIterator it = engine.scan(new ScanOptions(from, null, n, false, false))) {
        while (it.next()) {
          sink[0] += it.key().length + it.value().length;
          got++;
        }
      }
      return got;
    }

    @Override
    public void settle() {
      engine.compactRange(); // flushes first
      engine.awaitCompactions();
    }

    @Override
    public String describe() {
      EngineStats s = engine.stats();
      StringBuilder b = new StringBuilder();
      b.append("level  files   MiB      entries   Bloom KiB\n");
      for (EngineStats.LevelStats l : s.levels()) {
        if (l.files() > 0) {
          b.append(
              String.format(
                  Locale.ROOT,
                  "L%-5d %5d %7.1f %12d %9.1f%n",
                  l.level(),
                  l.files(),
                  l.bytes() / (double) MIB,
                  l.entries(),
                  l.bloomBytes() / 1024.0));
        }
      }
      long lookups = s.blockCacheHits() + s.blockCacheMisses();
      b.append(
          String.format(
              Locale.ROOT,
              "flushes %d (%.1f MiB), compactions %d (%d trivial "
                  + "moves; read %.1f MiB, wrote %.1f MiB)%n",
              s.flushes(),
              s.flushBytesWritten() / (double) MIB,
              s.compactions(),
              s.trivialMoves(),
              s.compactionBytesRead() / (double) MIB,
              s.compactionBytesWritten() / (double) MIB));
      b.append(
          String.format(
              Locale.ROOT,
              "block cache %.1f MiB used, hit rate %.1f%% since open " + "(%,d hits, %,d misses)%n",
              s.blockCacheBytes() / (double) MIB,
              lookups == 0 ? 0 : 100.0 * s.blockCacheHits() / lookups,
              s.blockCacheHits(),
              s.blockCacheMisses()));
      b.append(
          String.format(
              Locale.ROOT,
              "write pressure %s now; writes delayed %.1f ms in all, "
                  + "%d refused (the benchmark retried them after the hint: %d)%n",
              s.writePressure().describe(),
              s.writeDelayNanos() / 1e6,
              s.throttledWrites(),
              throttled));
      return b.toString();
    }

    @Override
    public long diskBytes() {
      return engine.stats().totalBytes();
    }

    @Override
    public void close() throws IOException {
      engine.close();
    }
  }

  static final class RocksStore implements Store {
    private final LRUCache cache;
    private final BloomFilter filter;
    private final Options options;
    private final WriteOptions writeOptions;
    private final ReadOptions readOptions;
    private final RocksDB db;

    RocksStore(Path dir, Compression c, boolean mmapReads) throws RocksDBException {
      RocksDB.loadLibrary();
      cache = new LRUCache(BLOCK_CACHE_BYTES);
      filter = new BloomFilter(BLOOM_BITS_PER_KEY, false);
      BlockBasedTableConfig table =
          new BlockBasedTableConfig()
              .setBlockSize(BLOCK_BYTES)
              .setBlockRestartInterval(RESTART_INTERVAL)
              .setBlockCache(cache)
              .setFilterPolicy(filter);
      options =
          new Options()
              .setCreateIfMissing(true)
              .setWriteBufferSize(MEMTABLE_BYTES)
              .setMaxWriteBufferNumber(1 + IMMUTABLE_MEMTABLES)
              .setLevel0FileNumCompactionTrigger(L0_TRIGGER)
              .setMaxBytesForLevelBase(LEVEL_BASE_BYTES)
              .setMaxBytesForLevelMultiplier(LEVEL_MULTIPLIER)
              .setLevelCompactionDynamicLevelBytes(false)
              .setTargetFileSizeBase(TARGET_FILE_BYTES)
              .setNumLevels(NUM_LEVELS)
              .setMaxBackgroundJobs(2) // one flush and one compaction
              .setMaxSubcompactions(1)
              .setMaxOpenFiles(MAX_OPEN_FILES)
              .setAllowMmapReads(mmapReads)
              .setCompressionType(
                  c == Compression.LZ4
                      ? CompressionType.LZ4_COMPRESSION
                      : CompressionType.NO_COMPRESSION)
              .setTableFormatConfig(table);
      writeOptions = new WriteOptions().setDisableWAL(true);
      readOptions = new ReadOptions();
      db = RocksDB.open(options, dir.toString());
    }

    @Override
    public String name() {
      return "RocksDB";
    }

    @Override
    public void put(byte[] key, byte[] value) throws RocksDBException {
      db.put(writeOptions, key, value);
    }

    @Override
    public byte[] get(byte[] key) throws RocksDBException {
      return db.get(readOptions, key);
    }

    @Override
    public int scan(byte[] from, int n, long[] sink) throws RocksDBException {
      int got = 0;
      try (RocksIterator it = db.newIterator(readOptions)) {
        for (it.seek(from); got < n && it.isValid(); it.next()) {
          sink[0] += it.key().length + it.value().length;
          got++;
        }
        it.status();
      }
      return got;
    }

    @Override
    public void settle() throws RocksDBException, InterruptedException {
      try (FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
        db.flush(f);
      }
      db.compactRange();
      while (db.getLongProperty("rocksdb.num-running-compactions") > 0
          || db.getLongProperty("rocksdb.num-running-flushes") > 0
          || db.getLongProperty("rocksdb.compaction-pending") > 0
          || db.getLongProperty("rocksdb.mem-table-flush-pending") > 0) {
        Thread.sleep(20);
      }
    }

    @Override
    public String describe() throws RocksDBException {
      return db.getProperty("rocksdb.levelstats").stripTrailing()
          + "\n"
          + String.format(
              Locale.ROOT,
              "block cache %.1f MiB used; table readers (index and " + "filter blocks) %.1f MiB%n",
              db.getLongProperty("rocksdb.block-cache-usage") / (double) MIB,
              db.getLongProperty("rocksdb.estimate-table-readers-mem") / (double) MIB);
    }

    @Override
    public long diskBytes() throws RocksDBException {
      return db.getLongProperty("rocksdb.total-sst-files-size");
    }

    @Override
    public void close() {
      db.close();
      readOptions.close();
      writeOptions.close();
      options.close();
      filter.close();
      cache.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Results

  enum Workload {
    FILL("fill: random put, 1 key per write"),
    HIT("get, present keys"),
    MISS("get, absent keys"),
    SCAN("scan, " + SCAN_LENGTH + " keys from a random present key");

    final String title;

    Workload(String title) {
      this.title = title;
    }
  }

  /** What one engine did in one workload. */
  static final class Result {
    final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    long ops;
    long nanos;
    long gcMillis;

    /** CPU seconds other processes used meanwhile (NaN when unknown). */
    double foreignCpuSeconds;

    double opsPerSecond() {
      return nanos == 0 ? 0 : ops / (nanos / 1e9);
    }

    String percentiles() {
      return us(latency.getValueAtPercentile(50))
          + " / "
          + us(latency.getValueAtPercentile(99))
          + " / "
          + us(latency.getValueAtPercentile(99.9));
    }

    private static String us(long nanos) {
      double u = nanos / 1e3;
      return u < 10
          ? String.format(Locale.ROOT, "%.2f", u)
          : u < 1000
              ? String.format(Locale.ROOT, "%.1f", u)
              : String.format(Locale.ROOT, "%,.0f", u);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Run

  private void run() throws Exception {
    Compression compression = args.compression;
    String loadStart = loadAverage();
    Instant started = Instant.now();
    progress(
        String.format(
            Locale.ROOT,
            "%,d keys, %.0f s per read workload in %d slices, "
                + "%.1f s warm-up, compression %s, mmap reads %s, seed %d",
            args.keys,
            args.seconds,
            args.slices,
            args.warmup,
            compression,
            args.mmapReads ? "on" : "off",
            args.seed));
    Path parent =
        args.workDir != null ? args.workDir : Paths.get(System.getProperty("java.io.tmpdir"));
    Files.createDirectories(parent);
    Path shaleDir = Files.createTempDirectory(parent, "shale-bench-shale-");
    Path rocksDir = Files.createTempDirectory(parent, "shale-bench-rocksdb-");
    Result[][] results = new Result[Workload.values().length][2];
    double[] settleSeconds = new double[2];
    String[] shapes = new String[2];
    long[] disk = new long[2];
    long[] sink = new long[1];
    List<Store> stores = new ArrayList<>();
    try {
      stores.add(new ShaleStore(shaleDir, compression, args.mmapReads));
      for (int e = 0; e < 2; e++) {
        if (e == 1) {
          gc();
          stores.add(new RocksStore(rocksDir, compression, args.mmapReads));
        }
        Store s = stores.get(e);
        results[Workload.FILL.ordinal()][e] = fill(s);
        progress(s.name() + " settle: flush, compactRange, wait for compactions ...");
        long t0 = System.nanoTime();
        s.settle();
        settleSeconds[e] = (System.nanoTime() - t0) / 1e9;
        disk[e] = s.diskBytes();
        progress(
            String.format(
                Locale.ROOT,
                "%s settled in %.1f s, %.1f MiB on disk",
                s.name(),
                settleSeconds[e],
                disk[e] / (double) MIB));
      }
      for (Workload w : new Workload[] {Workload.HIT, Workload.MISS, Workload.SCAN}) {
        Result[] r = {new Result(), new Result()};
        SplittableRandom[] rnd = new SplittableRandom[2];
        for (int e = 0; e < 2; e++) {
          gc();
          // Warm-up on its own stream, so that the measured sequence is the same for both.
          read(
              stores.get(e),
              w,
              new SplittableRandom(args.seed * 31 + w.ordinal() + 1000),
              args.warmup,
              null,
              "warm-up",
              sink);
          rnd[e] = new SplittableRandom(args.seed * 31 + w.ordinal());
        }
        for (int slice = 0; slice < args.slices; slice++) {
          for (int j = 0; j < 2; j++) {
            int e = (slice % 2 == 0) ? j : 1 - j; // ABBA order
            gc();
            read(
                stores.get(e),
                w,
                rnd[e],
                args.seconds / args.slices,
                r[e],
                "slice " + (slice + 1) + "/" + args.slices,
                sink);
          }
        }
        results[w.ordinal()] = r;
      }
      for (int e = 0; e < 2; e++) {
        shapes[e] = stores.get(e).describe(); // no writes since settling: the shape is the same
      }
      Instant finished = Instant.now();
      String report =
          report(results, settleSeconds, shapes, disk, started, finished, loadStart, loadAverage());
      System.out.print(report);
      if (args.out != null) {
        Path out = args.out.toAbsolutePath();
        if (out.getParent() != null) {
          Files.createDirectories(out.getParent());
        }
        Files.writeString(out, report, StandardCharsets.UTF_8);
        progress("wrote " + out);
      }
      progress("done (checksum of bytes read: " + sink[0] + ")");
    } finally {
      for (Store s : stores) {
        try {
          s.close();
        } catch (Exception e) {
          LOG.error("engine-bench: closing " + s.name() + ": " + e);
        }
      }
      Directories.deleteRecursively(shaleDir);
      Directories.deleteRecursively(rocksDir);
    }
  }

  private Result fill(Store s) throws Exception {
    gc();
    Result r = new Result();
    long gc0 = GcPauses.millisSoFar();
    CpuMeter cpu = new CpuMeter();
    byte[] key = new byte[KEY_BYTES];
    byte[] value = new byte[VALUE_BYTES];
    long n = args.keys;
    long t0 = System.nanoTime();
    long nextReport = t0 + 1_000_000_000L;
    long lastOps = 0;
    long lastTime = t0;
    for (long i = 0; i < n; i++) {
      keyInto(i, key);
      valueInto(i, value);
      long a = System.nanoTime();
      s.put(key, value);
      long b = System.nanoTime();
      r.latency.recordValue(b - a);
      if (b >= nextReport) {
        progress(
            String.format(
                Locale.ROOT,
                "%s fill: %,d / %,d keys, %,.0f ops/s (last second " + "%,.0f)",
                s.name(),
                i + 1,
                n,
                (i + 1) / ((b - t0) / 1e9),
                (i + 1 - lastOps) / ((b - lastTime) / 1e9)));
        lastOps = i + 1;
        lastTime = b;
        nextReport = b + 1_000_000_000L;
      }
    }
    r.nanos = System.nanoTime() - t0;
    r.ops = n;
    r.gcMillis = GcPauses.millisSoFar() - gc0;
    r.foreignCpuSeconds = cpu.foreignSeconds();
    progress(
        String.format(
            Locale.ROOT,
            "%s fill done: %,d keys in %.1f s, %,.0f ops/s, p50/p99/" + "p99.9 %s us",
            s.name(),
            n,
            r.nanos / 1e9,
            r.opsPerSecond(),
            r.percentiles()));
    return r;
  }

  /**
   * Run {@code w} on {@code s} for {@code seconds}, drawing requests from {@code rnd}; record into
   * {@code r} unless it is null (warm-up).
   */
  private void read(
      Store s,
      Workload w,
      SplittableRandom rnd,
      double seconds,
      Result r,
      String label,
      long[] sink)
      throws Exception {
    if (seconds <= 0) {
      return;
    }
    long n = args.keys;
    byte[] key = new byte[KEY_BYTES];
    long gc0 = GcPauses.millisSoFar();
    CpuMeter cpu = new CpuMeter();
    long t0 = System.nanoTime();
    long deadline = t0 + (long) (seconds * 1e9);
    long nextReport = t0 + 1_000_000_000L;
    long ops = 0;
    long now = t0;
    while (now < deadline) {
      long i = w == Workload.MISS ? n + rnd.nextLong(n) : rnd.nextLong(n);
      keyInto(i, key);
      long a = System.nanoTime();
      switch (w) {
        case HIT -> {
          byte[] v = s.get(key);
          now = System.nanoTime();
          if (v == null || v.length != VALUE_BYTES || CompressibleBytes.stamp(v) != i) {
            throw new IllegalStateException(
                s.name()
                    + ": get of present key number "
                    + i
                    + " returned "
                    + (v == null
                        ? "null"
                        : v.length + " bytes, stamped " + CompressibleBytes.stamp(v)));
          }
          sink[0] += v.length;
        }
        case MISS -> {
          byte[] v = s.get(key);
          now = System.nanoTime();
          if (v != null) {
            throw new IllegalStateException(
                s.name() + ": get of absent key number " + i + " returned " + v.length + " bytes");
          }
        }
        case SCAN -> {
          int got = s.scan(key, SCAN_LENGTH, sink);
          now = System.nanoTime();
          if (got == 0) {
            throw new IllegalStateException(
                s.name() + ": scan from present key number " + i + " returned nothing");
          }
        }
        default -> throw new IllegalArgumentException(w.toString());
      }
      if (r != null) {
        r.latency.recordValue(now - a);
      }
      ops++;
      if (now >= nextReport) {
        progress(
            String.format(
                Locale.ROOT,
                "%s %s %s: %.1f s, %,.0f ops/s",
                s.name(),
                w.title,
                label,
                (now - t0) / 1e9,
                ops / ((now - t0) / 1e9)));
        nextReport = now + 1_000_000_000L;
      }
    }
    long elapsed = now - t0;
    if (r != null) {
      r.ops += ops;
      r.nanos += elapsed;
      r.gcMillis += GcPauses.millisSoFar() - gc0;
      r.foreignCpuSeconds += cpu.foreignSeconds(); // NaN stays NaN
    }
    progress(
        String.format(
            Locale.ROOT,
            "%s %s %s: %,d ops in %.1f s, %,.0f ops/s",
            s.name(),
            w.title,
            label,
            ops,
            elapsed / 1e9,
            ops / (elapsed / 1e9)));
  }

  // ---------------------------------------------------------------------------------------------
  // Report

  private String report(
      Result[][] results,
      double[] settle,
      String[] shapes,
      long[] disk,
      Instant started,
      Instant finished,
      String loadStart,
      String loadEnd) {
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "Shale engine vs RocksDB %s: %,d keys of %d B with "
                + "values of %d B, compression %s, mmap reads %s (both), %.0f s per read workload "
                + "(%d slices, %.1f s warm-up), seed %d, one client thread.%n%n",
            RocksDB.rocksdbVersion(),
            args.keys,
            KEY_BYTES,
            VALUE_BYTES,
            args.compression,
            args.mmapReads ? "on" : "off",
            args.seconds,
            args.slices,
            args.warmup,
            args.seed));
    b.append("Shale revision: ")
        .append(System.getProperty("shale.ops.revision", "unknown"))
        .append(".\n\n");
    b.append(
        "| workload | Shale ops/s | RocksDB ops/s | ratio (Shale/RocksDB) "
            + "| Shale p50 / p99 / p99.9 (µs) | RocksDB p50 / p99 / p99.9 (µs) |\n");
    b.append("|---|---:|---:|---:|---:|---:|\n");
    List<String> met = new ArrayList<>();
    List<String> missed = new ArrayList<>();
    for (Workload w : Workload.values()) {
      Result s = results[w.ordinal()][0];
      Result r = results[w.ordinal()][1];
      double ratio = s.opsPerSecond() / r.opsPerSecond();
      (ratio >= 0.5 ? met : missed).add(w.title);
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %,.0f | %,.0f | %.2f | %s | %s |%n",
              w.title,
              s.opsPerSecond(),
              r.opsPerSecond(),
              ratio,
              s.percentiles(),
              r.percentiles()));
    }
    b.append('\n');
    b.append("Shale within 2x of RocksDB (ratio >= 0.50): ")
        .append(met.isEmpty() ? "none" : String.join("; ", met))
        .append(". Not within 2x: ")
        .append(missed.isEmpty() ? "none" : String.join("; ", missed))
        .append(".\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "Settle after the fill (flush + compactRange + wait): "
                + "Shale %.1f s, RocksDB %.1f s. On disk after settling: Shale %.1f MiB, RocksDB %.1f "
                + "MiB.%n",
            settle[0],
            settle[1],
            disk[0] / (double) MIB,
            disk[1] / (double) MIB));
    b.append("Operations measured: ");
    for (Workload w : Workload.values()) {
      Result s = results[w.ordinal()][0];
      Result r = results[w.ordinal()][1];
      b.append(
          String.format(
              Locale.ROOT,
              "%s: Shale %,d in %.1f s (GC %,d ms), RocksDB %,d in " + "%.1f s (GC %,d ms)%s",
              w.name().toLowerCase(Locale.ROOT),
              s.ops,
              s.nanos / 1e9,
              s.gcMillis,
              r.ops,
              r.nanos / 1e9,
              r.gcMillis,
              w == Workload.SCAN ? ".\n" : "; "));
    }
    b.append(
        "CPU seconds used by other processes on this machine while each engine was measured "
            + "(0 on a quiet machine): ");
    for (Workload w : Workload.values()) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s: Shale %s, RocksDB %s%s",
              w.name().toLowerCase(Locale.ROOT),
              cpuSeconds(results[w.ordinal()][0]),
              cpuSeconds(results[w.ordinal()][1]),
              w == Workload.SCAN ? ".\n" : "; "));
    }
    b.append("\nShale at the end (no writes since settling, so the shape is the settled one):\n\n")
        .append("```\n")
        .append(shapes[0])
        .append("```\n\n");
    b.append("RocksDB at the end:\n\n```\n").append(shapes[1]).append("```\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "Run %s to %s (%.0f s in all), %s %s, %d cores seen by "
                + "the JVM, max heap %,d MiB; load average (1/5/15 min) at start %s, at end %s.%n",
            started.truncatedTo(ChronoUnit.SECONDS),
            finished.truncatedTo(ChronoUnit.SECONDS),
            (System.nanoTime() - START) / 1e9,
            System.getProperty("java.vm.name"),
            System.getProperty("java.runtime.version"),
            Runtime.getRuntime().availableProcessors(),
            Runtime.getRuntime().maxMemory() / MIB,
            loadStart,
            loadEnd));
    return b.toString();
  }

  private static String cpuSeconds(Result r) {
    return Double.isNaN(r.foreignCpuSeconds)
        ? "unknown"
        : String.format(Locale.ROOT, "%.1f", Math.max(0, r.foreignCpuSeconds));
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /**
   * CPU time the rest of the machine used since creation: busy time of all cores from {@code
   * /proc/stat} minus this process's CPU time. Approximate (clock ticks are assumed to be 1/100 s,
   * the Linux default), and only on Linux; elsewhere it reports NaN.
   */
  static final class CpuMeter {
    private final long busy0 = machineBusyTicks();
    private final long own0 = processCpuNanos();

    double foreignSeconds() {
      long busy = machineBusyTicks();
      long own = processCpuNanos();
      if (busy0 < 0 || busy < 0 || own0 < 0 || own < 0) {
        return Double.NaN;
      }
      return (busy - busy0) / 100.0 - (own - own0) / 1e9;
    }

    private static long machineBusyTicks() {
      try (var lines = Files.lines(Paths.get("/proc/stat"))) {
        String cpu = lines.findFirst().orElse("");
        String[] f = cpu.trim().split("\\s+");
        if (!f[0].equals("cpu") || f.length < 8) {
          return -1;
        }
        long busy = 0;
        for (int i = 1; i < f.length; i++) {
          if (i != 4 && i != 5 && i <= 7) { // user nice system [idle iowait] irq softirq
            busy += Long.parseLong(f[i]);
          }
        }
        return busy;
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    private static long processCpuNanos() {
      if (ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os) {
        return os.getProcessCpuTime();
      }
      return -1;
    }
  }

  private static void progress(String what) {
    LOG.info(String.format(Locale.ROOT, "[%6.1f s] %s", (System.nanoTime() - START) / 1e9, what));
  }

  private static void gc() {
    System.gc();
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Paths.get("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /** The splitmix64 finalizer: a bijection on 64-bit values. */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Key number {@code i}: its first 8 bytes alone are distinct for distinct numbers. */
  void keyInto(long i, byte[] k) {
    long a = mix64(i ^ keySalt);
    long b = mix64(a + 0x632BE59BD9B4E019L);
    CompressibleBytes.putLong(k, 0, a);
    CompressibleBytes.putLong(k, 8, b);
  }

  void valueInto(long i, byte[] v) {
    int off =
        (int) Long.remainderUnsigned(mix64(i * 0x9E3779B97F4A7C15L), SOURCE_BYTES - VALUE_BYTES);
    System.arraycopy(source, off, v, 0, VALUE_BYTES);
    CompressibleBytes.putLong(v, 0, i);
  }

  // ---------------------------------------------------------------------------------------------
  // Arguments

  static final class Args {
    static final String USAGE =
        String.join(
            "\n",
            "usage: engine-bench [--keys N] [--seconds S] [--slices K] [--warmup S] [--quick]",
            "                    [--compression lz4|none] [--mmap-reads on|off] [--seed N]",
            "                    [--work-dir DIR] [--out FILE]",
            "  --keys N         keys to fill (default 2000000)",
            "  --seconds S      measured seconds per read workload and engine (default 20)",
            "  --slices K       alternate the engines K times within a read workload (default 4)",
            "  --warmup S       unrecorded warm-up per read workload and engine (default 2)",
            "  --quick          100000 keys, 1 s per read workload, 2 slices, 0.3 s warm-up (for CI;",
            "                   explicit options given after --quick override it)",
            "  --compression C  lz4 (default) or none, for both engines",
            "  --mmap-reads M   on (default: Shale's default) or off: read tables through a memory",
            "                   mapping (Shale mmap_reads, RocksDB allow_mmap_reads), both engines",
            "  --seed N         seed of keys, values and request sequences (default 42)",
            "  --work-dir DIR   parent of the two temporary engine directories (default:",
            "                   java.io.tmpdir); both are deleted at the end",
            "  --out FILE       also write the markdown report to FILE");

    long keys = 2_000_000;
    double seconds = 20;
    int slices = 4;
    double warmup = 2;
    Compression compression = Compression.LZ4;
    boolean mmapReads = true;
    long seed = 42;
    Path workDir;
    Path out;
    boolean help;

    static Args parse(String[] argv) {
      Args a = new Args();
      for (int i = 0; i < argv.length; i++) {
        String arg = argv[i];
        switch (arg) {
          case "--keys" -> a.keys = (long) number(argv, ++i, arg, 1, 1e9);
          case "--seconds" -> a.seconds = number(argv, ++i, arg, 0.01, 86400);
          case "--slices" -> a.slices = (int) number(argv, ++i, arg, 1, 1000);
          case "--warmup" -> a.warmup = number(argv, ++i, arg, 0, 3600);
          case "--quick" -> {
            a.keys = 100_000;
            a.seconds = 1;
            a.slices = 2;
            a.warmup = 0.3;
          }
          case "--compression" -> {
            String v = need(argv, ++i, arg);
            a.compression = Compression.fromName(v);
            if (a.compression == null) {
              throw new IllegalArgumentException(arg + " must be lz4 or none, got " + v);
            }
          }
          case "--mmap-reads" -> {
            String v = need(argv, ++i, arg);
            if (!v.equals("on") && !v.equals("off")) {
              throw new IllegalArgumentException(arg + " must be on or off, got " + v);
            }
            a.mmapReads = v.equals("on");
          }
          case "--seed" -> a.seed = (long) number(argv, ++i, arg, 0, 1e15);
          case "--work-dir" -> a.workDir = callerPath(need(argv, ++i, arg));
          case "--out" -> a.out = callerPath(need(argv, ++i, arg));
          case "-h", "--help" -> a.help = true;
          default -> throw new IllegalArgumentException("unknown argument " + arg);
        }
      }
      return a;
    }

    private static double number(String[] argv, int i, String name, double min, double max) {
      String v = need(argv, i, name);
      double d;
      try {
        d = Double.parseDouble(v.replace("_", ""));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + " needs a number, got " + v);
      }
      if (!(d >= min && d <= max)) {
        throw new IllegalArgumentException(
            name + " must be in [" + min + ", " + max + "], got " + v);
      }
      return d;
    }
  }
}
