package io.shale.ops.bench;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import io.shale.ops.Directories;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * How much heap an engine needs as its data grows: loads small keys (the worst case for per-key
 * structures: 24-byte keys, 100-byte values) into a fresh engine with the node's memtable size and
 * after every GiB of user data and 20,000 point reads (which open every table) reports, once a full
 * collection ran, the old generation's use, the heap's, the native memory of table indexes and
 * filters (zero before this memory moved off the heap), and the tables. Run with {@code
 * ops/bin/heap-by-data-size [GiB] [work-dir]} (4 GiB and a temporary directory by default).
 */
public final class HeapByDataSize {
  private static final int KEY_BYTES = 24;
  private static final int VALUE_BYTES = 100;
  private static final int BATCH = 1000;

  private HeapByDataSize() {}

  public static void main(String[] argv) throws Exception {
    int gib = argv.length > 0 ? Integer.parseInt(argv[0]) : 4;
    Path dir = argv.length > 1 ? Path.of(argv[1]) : Files.createTempDirectory("heap-by-data-size");
    Directories.deleteRecursively(dir);
    Files.createDirectories(dir);
    EngineOptions options = EngineOptions.defaults().withMemtableSize(32L << 20);
    System.out.printf(
        Locale.ROOT,
        "Java %s, max heap %,d MiB, %s%n%n",
        Runtime.version(),
        Runtime.getRuntime().maxMemory() >> 20,
        ManagementFactory.getRuntimeMXBean().getInputArguments());
    System.out.println(
        "| user data (GiB) | keys | old gen after full GC (MiB) | heap after full GC (MiB)"
            + " | index+filter (MiB) | tables | load s |");
    System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
    byte[] value = new byte[VALUE_BYTES];
    SplittableRandom rnd = new SplittableRandom(42);
    long perGib = (1L << 30) / (KEY_BYTES + VALUE_BYTES);
    long key = 0;
    long index = 0;
    long t0 = System.nanoTime();
    try (Engine engine = Engine.open(dir, options)) {
      for (int g = 1; g <= gib; g++) {
        for (long end = perGib * g; key < end; ) {
          WriteBatch b = new WriteBatch();
          for (int i = 0; i < BATCH; i++, key++) {
            // Keys in a scattered order, so that every level's files overlap and compact.
            long k = Long.reverse(key) ^ 0x5DEECE66DL;
            byte[] kb = ByteBuffer.allocate(KEY_BYTES).putLong(k).putLong(key).array();
            rnd.nextBytes(value);
            b.put(kb, value.clone());
          }
          engine.apply(b, ++index);
        }
        engine.flush();
        engine.awaitCompactions();
        // Point reads across the whole key space open every table (a table's index and filter are
        // read when it is opened, by a read, not when it is written).
        for (int i = 0; i < 20_000; i++) {
          long k = rnd.nextLong(key);
          engine.get(
              ByteBuffer.allocate(KEY_BYTES)
                  .putLong(Long.reverse(k) ^ 0x5DEECE66DL)
                  .putLong(k)
                  .array());
        }
        System.gc();
        System.out.printf(
            Locale.ROOT,
            "| %d | %,d | %.1f | %.1f | %.1f | %,d | %.0f |%n",
            g,
            key,
            oldGenUsed() / 1048576.0,
            (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / 1048576.0,
            engine.stats().tableReaderMemoryBytes() / 1048576.0,
            engine.stats().levels().stream().mapToInt(l -> l.files()).sum(),
            (System.nanoTime() - t0) / 1e9);
      }
    } finally {
      Directories.deleteRecursively(dir);
    }
  }

  private static long oldGenUsed() {
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      String n = p.getName();
      if (n.contains("Old Gen") || n.contains("Tenured") || n.equals("ZGC Old Generation")) {
        return p.getUsage().getUsed();
      }
    }
    return -1;
  }
}
