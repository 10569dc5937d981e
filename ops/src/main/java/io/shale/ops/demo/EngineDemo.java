package io.shale.ops.demo;

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
import io.shale.ops.Directories;
import io.shale.ops.bench.CompressibleBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * Loads a few hundred MiB ({@code --mib}, default 300) into a fresh engine, one key per {@link
 * WriteBatch} and one {@code apply} per batch with indexes 1, 2, 3, ... (as the Raft state machine
 * does), settles it ({@code flush()}, {@code awaitCompactions()}), checks that everything reads
 * back, times point reads and scans, and prints what the engine did (levels, Bloom filter memory,
 * flushes, compactions, block cache hit rate).
 *
 * <p>Keys and values are pure functions of the key number ({@code key(i)}, {@code value(i)}), so
 * the demo can recompute what it expects; absent keys are numbers at or above the loaded count. Any
 * mismatch stops the demo with exit status 1 and keeps the directory for inspection. Engine options
 * ({@code demoOptions()}) are sized down so that a few hundred MiB spread over several levels.
 */
public final class EngineDemo {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EngineDemo.class);

  private static final long MIB = 1L << 20;
  private static final int SOURCE_BYTES = 4 << 20;
  private static final int MAX_VALUE = 64 << 10;

  private final long seed;
  private final long keySalt;
  private final byte[] source;

  private EngineDemo(long seed) {
    this.seed = seed;
    this.keySalt = mix64(seed ^ 0x5DEECE66DL);
    this.source = CompressibleBytes.source(new SplittableRandom(seed), SOURCE_BYTES);
  }

  /** A bulk loader's answer to backpressure: wait as long as the engine hints, then retry. */
  static void applyWithBackoff(Engine engine, WriteBatch batch, long index) {
    while (true) {
      try {
        engine.apply(batch, index);
        return;
      } catch (io.shale.engine.pressure.WriteThrottledException e) {
        try {
          Thread.sleep(Math.max(1, e.retryAfter().toMillis()));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(ie);
        }
      }
    }
  }

  public static void main(String[] args) throws Exception {
    long start = System.nanoTime();
    Args a;
    try {
      a = Args.parse(args);
    } catch (IllegalArgumentException e) {
      LOG.error("engine-demo: " + e.getMessage());
      System.out.println(Args.USAGE);
      System.exit(2);
      return;
    }
    if (a.help) {
      System.out.println(Args.USAGE);
      return;
    }
    boolean ok = false;
    Path dir;
    boolean ownDir = a.dir == null;
    if (ownDir) {
      dir = Files.createTempDirectory("shale-engine-demo-");
    } else {
      dir = a.dir;
      if (Files.isDirectory(dir)) {
        try (Stream<Path> s = Files.list(dir)) {
          if (s.findAny().isPresent()) {
            LOG.error("engine-demo: " + dir + " is not empty; give a new or empty " + "directory");
            System.exit(2);
          }
        }
      }
    }
    try {
      new EngineDemo(a.seed).run(dir, a);
      ok = true;
    } finally {
      if (ownDir && !a.keep && ok) {
        Directories.deleteRecursively(dir);
        System.out.printf("%nremoved %s%n", dir);
      } else {
        System.out.printf("%nkept %s%n", dir);
      }
      System.out.printf("total time %.1f s%n", (System.nanoTime() - start) / 1e9);
    }
  }

  static EngineOptions demoOptions() {
    return EngineOptions.defaults()
        .withMemtableSize(16 * MIB)
        .withBlockCache(32 * MIB)
        .withBloom(BloomPolicy.DEFAULT)
        .withCompaction(
            new CompactionOptions(4, 10, 64 * MIB, true, 16 * MIB, 7, 1, CompactionScore.SEED));
  }

  private void run(Path dir, Args a) throws IOException {
    EngineOptions options = demoOptions();
    System.out.printf("Shale engine demo: %d MiB of user data into %s%n", a.mib, dir);
    System.out.printf(
        "options: memtable %d MiB, level-1 target %d MiB (x%d per level), files "
            + "%d MiB, block cache %d MiB, block %d B, %s, Bloom bits/key L0 %d, L1 %d, L2 %d, "
            + "deeper %d, %d compaction thread(s), mmap reads %s%n%n",
        options.memtableSizeBytes() / MIB,
        options.compaction().maxBytesForLevelBase() / MIB,
        options.compaction().levelMultiplier(),
        options.compaction().targetFileSizeBytes() / MIB,
        options.blockCacheBytes() / MIB,
        options.table().blockSize(),
        options.table().compression(),
        options.bloom().level0(),
        options.bloom().level1(),
        options.bloom().level2(),
        options.bloom().deeper(),
        options.compaction().threads(),
        options.mmapReads() ? "on" : "off");

    try (Engine engine = Engine.open(dir, options)) {
      long keys = load(engine, a.mib * MIB);
      settle(engine);
      verify(engine, keys);
      reads(engine, keys, a.readSeconds);
      printStats(engine.stats(), options, a.mib * MIB);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Load

  private long load(Engine engine, long targetBytes) {
    System.out.println("== load");
    long t0 = System.nanoTime();
    long lastReport = t0;
    long lastBytes = 0;
    long written = 0;
    long i = 0;
    long index = 1;
    while (written < targetBytes) {
      byte[] k = key(i);
      byte[] v = value(i);
      applyWithBackoff(engine, new WriteBatch().put(k, v), index++);
      written += k.length + v.length;
      i++;
      if ((i & 255) == 0) {
        long now = System.nanoTime();
        if (now - lastReport >= 1_000_000_000L) {
          EngineStats s = engine.stats();
          System.out.printf(
              "  %7.1f / %d MiB  %6.1f MiB/s (last second: %6.1f)  %,9d keys  "
                  + "L0 files %d, flushes %d, compactions %d%n",
              written / (double) MIB,
              targetBytes / MIB,
              mibPerSec(written, now - t0),
              mibPerSec(written - lastBytes, now - lastReport),
              i,
              s.levels().get(0).files(),
              s.flushes(),
              s.compactions());
          lastReport = now;
          lastBytes = written;
        }
      }
    }
    long ns = System.nanoTime() - t0;
    System.out.printf(
        "  loaded %,d keys, %.1f MiB in %.1f s: %.1f MiB/s, %,.0f keys/s%n",
        i, written / (double) MIB, ns / 1e9, mibPerSec(written, ns), i / (ns / 1e9));
    return i;
  }

  private static double mibPerSec(long bytes, long ns) {
    return ns <= 0 ? 0 : bytes / (double) MIB / (ns / 1e9);
  }

  private static void settle(Engine engine) {
    long t0 = System.nanoTime();
    engine.flush();
    long t1 = System.nanoTime();
    engine.awaitCompactions();
    long t2 = System.nanoTime();
    System.out.printf(
        "  flush() %.1f s, then awaitCompactions() %.1f s%n%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
  }

  // ---------------------------------------------------------------------------------------------
  // Verify

  private void verify(Engine engine, long keys) {
    System.out.println("== verify");
    long t0 = System.nanoTime();
    SplittableRandom rnd = new SplittableRandom(seed ^ 0x7E57L);
    int sample = 3000;
    int tail = 0;
    for (int n = 0; n < sample; n++) {
      long i = n == 0 ? 0 : n == 1 ? keys - 1 : rnd.nextLong(keys);
      byte[] expected = value(i);
      byte[] got = engine.get(key(i));
      if (!Arrays.equals(expected, got)) {
        fail(
            "get("
                + str(key(i))
                + ") returned "
                + describe(got)
                + ", expected "
                + describe(expected));
      }
      if (expected.length >= 2048) {
        tail++;
      }
    }
    int absent = 500;
    for (int n = 0; n < absent; n++) {
      long i = keys + rnd.nextLong(keys);
      byte[] got = engine.get(key(i));
      if (got != null) {
        fail("get(" + str(key(i)) + ") of a key never written returned " + describe(got));
      }
    }
    // A scan: every entry must be one the demo wrote (its value names its key number), in order.
    int scanned = 0;
    byte[] from = key(rnd.nextLong(keys));
    byte[] prev = null;
    try (ScanIterator it = engine.scan(new ScanOptions(from, null, 1000, false, false))) {
      while (it.next()) {
        byte[] k = it.key();
        byte[] v = it.value();
        if (prev != null && Arrays.compareUnsigned(prev, k) >= 0) {
          fail("scan out of order: " + str(prev) + " then " + str(k));
        }
        if (scanned == 0 && Arrays.compareUnsigned(k, from) < 0) {
          fail("scan from " + str(from) + " started at " + str(k));
        }
        long i = v.length >= 8 ? CompressibleBytes.stamp(v) : -1;
        if (i < 0 || i >= keys || !Arrays.equals(key(i), k) || !Arrays.equals(value(i), v)) {
          fail("scan entry " + str(k) + " = " + describe(v) + " is not what was written");
        }
        prev = k;
        scanned++;
      }
    }
    // Everything, keys only: the count must be exact and the order strict.
    long count = 0;
    prev = null;
    try (ScanIterator it = engine.scan(ScanOptions.all().withKeysOnly())) {
      while (it.next()) {
        byte[] k = it.key();
        if (prev != null && Arrays.compareUnsigned(prev, k) >= 0) {
          fail("full scan out of order: " + str(prev) + " then " + str(k));
        }
        prev = k;
        count++;
      }
    }
    if (count != keys) {
      fail("a full scan found " + count + " keys, " + keys + " were written");
    }
    System.out.printf(
        "  OK: %,d sampled keys (%d with values of 2 KiB or more) read back equal, "
            + "%,d absent keys absent, a scan of %,d entries checked, a full keys-only scan found "
            + "all %,d keys in order (%.1f s)%n%n",
        sample, tail, absent, scanned, count, (System.nanoTime() - t0) / 1e9);
  }

  private static void fail(String what) {
    throw new IllegalStateException("VERIFICATION FAILED: " + what);
  }

  private static String describe(byte[] v) {
    if (v == null) {
      return "null";
    }
    return v.length + " bytes" + (v.length >= 8 ? " stamped " + CompressibleBytes.stamp(v) : "");
  }

  private static String str(byte[] k) {
    return new String(k, StandardCharsets.ISO_8859_1);
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  private void reads(Engine engine, long keys, double seconds) {
    System.out.printf("== reads (%.1f s each, one thread)%n", seconds);
    long sink = 0;

    SplittableRandom rnd = new SplittableRandom(seed ^ 0x4EAD5L);
    Histogram h = newHistogram();
    long n = 0;
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    long t0 = System.nanoTime();
    long now = t0;
    while (now < deadline) {
      long i = rnd.nextLong(keys);
      byte[] k = key(i);
      long s = System.nanoTime();
      byte[] v = engine.get(k);
      now = System.nanoTime();
      h.recordValue(now - s);
      if (v == null || v.length != valueLength(i) || CompressibleBytes.stamp(v) != i) {
        fail("get(" + str(k) + ") returned " + describe(v) + " during the read phase");
      }
      sink += v.length;
      n++;
    }
    report("get, present keys", n, now - t0, h);

    h = newHistogram();
    n = 0;
    deadline = System.nanoTime() + (long) (seconds * 1e9);
    t0 = System.nanoTime();
    now = t0;
    while (now < deadline) {
      byte[] k = key(keys + rnd.nextLong(keys));
      long s = System.nanoTime();
      byte[] v = engine.get(k);
      now = System.nanoTime();
      h.recordValue(now - s);
      if (v != null) {
        fail("get(" + str(k) + ") of an absent key returned " + describe(v));
      }
      n++;
    }
    report("get, absent keys", n, now - t0, h);

    h = newHistogram();
    n = 0;
    long entries = 0;
    deadline = System.nanoTime() + (long) (seconds * 1e9);
    t0 = System.nanoTime();
    now = t0;
    while (now < deadline) {
      byte[] from = key(rnd.nextLong(keys));
      long s = System.nanoTime();
      int got = 0;
      try (ScanIterator it = engine.scan(new ScanOptions(from, null, 100, false, false))) {
        while (it.next()) {
          sink += it.key().length + it.value().length;
          got++;
        }
      }
      now = System.nanoTime();
      h.recordValue(now - s);
      if (got == 0) {
        fail("a scan from present key " + str(from) + " returned nothing");
      }
      entries += got;
      n++;
    }
    report("scan, 100 keys", n, now - t0, h);
    System.out.printf(
        "  (scans returned %,d entries, %.1f per scan; %,d bytes read in all)%n%n",
        entries, entries / (double) Math.max(1, n), sink);
  }

  private static Histogram newHistogram() {
    return new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
  }

  private static void report(String what, long n, long ns, Histogram h) {
    System.out.printf(
        "  %-18s %,10d ops  %,10.0f ops/s  p50 %8.1f us  p99 %8.1f us  " + "max %9.1f us%n",
        what,
        n,
        n / (ns / 1e9),
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getMaxValue() / 1e3);
  }

  // ---------------------------------------------------------------------------------------------
  // Stats

  private static void printStats(EngineStats s, EngineOptions o, long userBytes) {
    System.out.println("== engine stats");
    System.out.println(
        "  level  files      MiB     entries   target MiB  pressure   Bloom KiB"
            + "  bits/key (policy / actual)");
    for (EngineStats.LevelStats l : s.levels()) {
      if (l.files() == 0 && l.level() > 0 && l.level() > deepest(s)) {
        continue;
      }
      String target =
          l.level() == 0
              ? "   " + o.compaction().level0FileNumCompactionTrigger() + " files"
              : String.format("%10d", l.targetBytes() / MIB);
      String actual =
          l.entries() == 0 ? "-" : String.format("%.1f", l.bloomBytes() * 8.0 / l.entries());
      System.out.printf(
          "  L%-4d %6d %8.1f %11d %12s %9.2f %11.1f  %d / %s%n",
          l.level(),
          l.files(),
          l.bytes() / (double) MIB,
          l.entries(),
          target,
          l.sizePressure(),
          l.bloomBytes() / 1024.0,
          l.bloomBitsPerKey(),
          actual);
    }
    System.out.println(
        "  (a level's actual bits/key is above its policy when it holds files"
            + " moved down unchanged\n   from a shallower level by trivial moves: they keep the filter"
            + " they were written with)");
    long bloom = s.levels().stream().mapToLong(EngineStats.LevelStats::bloomBytes).sum();
    System.out.printf(
        "  total  %5d %8.1f MiB of tables for %.1f MiB of user data; Bloom filters "
            + "%.1f KiB in memory%n",
        s.totalFiles(), s.totalBytes() / (double) MIB, userBytes / (double) MIB, bloom / 1024.0);
    System.out.printf(
        "  blob files %d: %.1f MiB live, %.1f MiB dead; blob GC runs %d (%.1f MiB "
            + "relocated); %.1f MiB on disk in all%n",
        s.blobFiles().size(),
        s.blobLiveBytes() / (double) MIB,
        s.blobDeadBytes() / (double) MIB,
        s.blobGcRuns(),
        s.blobGcRelocatedBytes() / (double) MIB,
        s.diskBytes() / (double) MIB);
    System.out.printf(
        "  compaction bytes read: keys %.1f MiB, inline values %.1f MiB, blobs %.1f "
            + "MiB; written: keys %.1f, values %.1f, blobs %.1f MiB%n",
        s.compactionRead().keyBytes() / (double) MIB,
        s.compactionRead().valueBytes() / (double) MIB,
        s.compactionRead().blobBytes() / (double) MIB,
        s.compactionWritten().keyBytes() / (double) MIB,
        s.compactionWritten().valueBytes() / (double) MIB,
        s.compactionWritten().blobBytes() / (double) MIB);
    System.out.printf(
        "  write pressure %s, pending compaction bytes %.1f MiB, writes delayed "
            + "%.1f ms in all, %d refused%n",
        s.writePressure().describe(),
        s.pendingCompactionBytes() / (double) MIB,
        s.writeDelayNanos() / 1e6,
        s.throttledWrites());
    System.out.printf(
        "  flushes %d (%.1f MiB written)%n", s.flushes(), s.flushBytesWritten() / (double) MIB);
    System.out.printf(
        "  compactions %d (of which %d trivial moves): read %.1f MiB, wrote %.1f MiB" + "%n",
        s.compactions(),
        s.trivialMoves(),
        s.compactionBytesRead() / (double) MIB,
        s.compactionBytesWritten() / (double) MIB);
    System.out.printf(
        "  write amplification (flush + compaction bytes written / user bytes): " + "%.2f%n",
        (s.flushBytesWritten() + s.compactionBytesWritten()) / (double) userBytes);
    long lookups = s.blockCacheHits() + s.blockCacheMisses();
    System.out.printf(
        "  block cache: %.1f%% hit rate (%,d hits, %,d misses since open), %.1f of "
            + "%d MiB used%n",
        lookups == 0 ? 0 : 100.0 * s.blockCacheHits() / lookups,
        s.blockCacheHits(),
        s.blockCacheMisses(),
        s.blockCacheBytes() / (double) MIB,
        o.blockCacheBytes() / MIB);
    if (o.mmapReads() && lookups == 0) {
      System.out.println(
          "  (mmap_reads is on: data blocks were read through the tables' memory"
              + " mappings, from the\n   OS page cache, without going through the block cache)");
    } else if (o.mmapReads() && s.blockCacheHits() == 0 && s.blockCacheBytes() == 0) {
      System.out.println(
          "  (mmap_reads is on: the misses are reads through the tables' memory"
              + " mappings, from the\n   OS page cache; this engine does not cache those blocks)");
    }
    System.out.printf(
        "  applied index %,d, persisted %,d, pinned obsolete bytes %d%n",
        s.lastAppliedIndex(), s.persistedAppliedIndex(), s.pinnedObsoleteBytes());
  }

  private static int deepest(EngineStats s) {
    int d = 0;
    for (EngineStats.LevelStats l : s.levels()) {
      if (l.files() > 0) {
        d = l.level();
      }
    }
    return d;
  }

  // ---------------------------------------------------------------------------------------------
  // Data

  /** The splitmix64 finalizer: a bijection on 64-bit values. */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  byte[] key(long i) {
    long h = mix64(i ^ keySalt);
    byte[] k = new byte[20];
    k[0] = 'k';
    k[1] = 'e';
    k[2] = 'y';
    k[3] = '-';
    for (int j = 0; j < 16; j++) {
      k[4 + j] = HEX[(int) (h >>> (60 - 4 * j)) & 15];
    }
    return k;
  }

  int valueLength(long i) {
    long h = mix64(i * 0x9E3779B97F4A7C15L + seed);
    int bucket = (int) Long.remainderUnsigned(h, 100);
    double u = ((h >>> 11) & ((1L << 32) - 1)) / (double) (1L << 32); // [0, 1), independent bits
    if (bucket < 75) {
      return 100 + (int) (u * 412);
    }
    if (bucket < 98) {
      return 512 + (int) (u * 1536);
    }
    // log-uniform in [2 KiB, 64 KiB]
    return Math.min(MAX_VALUE, (int) (2048 * Math.pow(32, u)));
  }

  byte[] value(long i) {
    int len = valueLength(i);
    long h = mix64(i + 0x632BE59BD9B4E019L);
    int off = (int) Long.remainderUnsigned(h, SOURCE_BYTES - MAX_VALUE);
    byte[] v = Arrays.copyOfRange(source, off, off + len);
    CompressibleBytes.putLong(v, 0, i);
    return v;
  }

  // ---------------------------------------------------------------------------------------------
  // Arguments

  private static final class Args {
    static final String USAGE =
        String.join(
            "\n",
            "usage: engine-demo [--dir DIR] [--keep] [--mib N] [--read-seconds S] [--seed N]",
            "  --dir DIR          engine directory, new or empty (default: a fresh temporary",
            "                     directory, deleted at the end unless --keep; a --dir is kept)",
            "  --keep             keep the temporary directory",
            "  --mib N            MiB of user data (key + value bytes) to load (default 300)",
            "  --read-seconds S   duration of each read phase (default 2)",
            "  --seed N           seed of keys, values and requests (default 42)");

    Path dir;
    boolean keep;
    boolean help;
    long mib = 300;
    double readSeconds = 2;
    long seed = 42;

    static Args parse(String[] args) {
      Args a = new Args();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        switch (arg) {
          case "--dir" -> a.dir = callerPath(need(args, ++i, arg));
          case "--keep" -> a.keep = true;
          case "--mib" -> a.mib = positiveLong(need(args, ++i, arg), arg);
          case "--read-seconds" -> {
            String v = need(args, ++i, arg);
            try {
              a.readSeconds = Double.parseDouble(v);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException(arg + " needs a number of seconds, got " + v);
            }
            if (!(a.readSeconds > 0 && a.readSeconds <= 3600)) {
              throw new IllegalArgumentException(arg + " must be in (0, 3600], got " + v);
            }
          }
          case "--seed" -> {
            String v = need(args, ++i, arg);
            try {
              a.seed = Long.parseLong(v);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException(arg + " needs an integer, got " + v);
            }
          }
          case "-h", "--help" -> a.help = true;
          default -> throw new IllegalArgumentException("unknown argument " + arg);
        }
      }
      return a;
    }

    private static long positiveLong(String v, String name) {
      try {
        long n = Long.parseLong(v);
        if (n <= 0) {
          throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
        return n;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + " needs a positive integer, got " + v);
      }
    }
  }
}
