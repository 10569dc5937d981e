package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.key.Keys;
import io.shale.engine.sstable.Compression;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Thousands of random batches, gets, scans, snapshots, flushes, compactions, checkpoints and
 * reopenings, checked step by step against a sorted map. A failure names the seed and the step;
 * rerun with that seed to reproduce it.
 */
class ModelBasedEngineTest {
  private static final int STEPS = 4000;

  @TempDir Path tmp;

  /** One open snapshot and the model state it must keep seeing. */
  private record SnapshotUnderTest(Snapshot snapshot, TreeMap<byte[], byte[]> model) {}

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void engineMatchesSortedMap(long seed) throws Exception {
    Random rnd = new Random(seed);
    EngineOptions options =
        TestOptions.tiny(seed % 2 == 0 ? Compression.LZ4 : Compression.NONE)
            .withMmapReads(seed % 3 != 0); // seeds 3 and 6 read through the block cache
    Path dir = tmp.resolve("db");
    TreeMap<byte[], byte[]> model = new TreeMap<>(Keys.USER_ORDER);
    List<SnapshotUnderTest> snapshots = new ArrayList<>();
    Engine engine = Engine.open(dir, options);
    long index = -1;
    int checkpoints = 0;
    long flushes = 0;
    long compactions = 0;
    long gcRuns = 0;
    try {
      for (int step = 0; step < STEPS; step++) {
        String where = "seed " + seed + " step " + step;
        int op = rnd.nextInt(100);
        if (op < 45) {
          WriteBatch batch = new WriteBatch();
          int n = 1 + rnd.nextInt(12);
          TreeMap<byte[], byte[]> staged = new TreeMap<>(Keys.USER_ORDER);
          for (int i = 0; i < n; i++) {
            byte[] key = key(rnd);
            if (rnd.nextInt(5) == 0) {
              batch.delete(key);
              staged.put(key, null);
            } else {
              byte[] value = value(rnd);
              batch.put(key, value);
              staged.put(key, value);
            }
          }
          index += 1 + rnd.nextInt(3);
          engine.apply(batch, index);
          for (Map.Entry<byte[], byte[]> e : staged.entrySet()) {
            if (e.getValue() == null) {
              model.remove(e.getKey());
            } else {
              model.put(e.getKey(), e.getValue());
            }
          }
        } else if (op < 65) {
          byte[] key = key(rnd);
          assertThat(engine.get(key))
              .as(where + " get " + new String(key, StandardCharsets.UTF_8))
              .isEqualTo(model.get(key));
        } else if (op < 77) {
          checkScan(engine, model, rnd, where);
        } else if (op < 81) {
          snapshots.add(new SnapshotUnderTest(engine.snapshot(), new TreeMap<>(model)));
        } else if (op < 87 && !snapshots.isEmpty()) {
          SnapshotUnderTest s = snapshots.get(rnd.nextInt(snapshots.size()));
          byte[] key = key(rnd);
          assertThat(s.snapshot().get(key))
              .as(where + " snapshot get")
              .isEqualTo(s.model().get(key));
          checkScan(s.snapshot(), s.model(), rnd, where + " snapshot");
        } else if (op < 90 && !snapshots.isEmpty()) {
          snapshots.remove(rnd.nextInt(snapshots.size())).snapshot().close();
        } else if (op < 93) {
          engine.flush();
          assertThat(engine.persistedAppliedIndex()).as(where).isEqualTo(index);
        } else if (op < 95) {
          if (rnd.nextBoolean()) {
            engine.compactRange();
          } else {
            byte[] a = key(rnd);
            byte[] b = key(rnd);
            engine.compactRange(Keys.compare(a, b) <= 0 ? a : b, Keys.compare(a, b) <= 0 ? b : a);
          }
        } else if (op < 97) {
          for (SnapshotUnderTest s : snapshots) {
            s.snapshot().close();
          }
          snapshots.clear();
          flushes += engine.stats().flushes();
          compactions += engine.stats().compactions();
          gcRuns += engine.stats().blobGcRuns();
          engine.close();
          assertNoNativeMemoryLeft(engine, where);
          engine = Engine.open(dir, options);
          assertThat(engine.persistedAppliedIndex()).as(where + " reopen").isEqualTo(index);
        } else if (op < 98) {
          Path cp = tmp.resolve("checkpoint-" + checkpoints++);
          CheckpointInfo info = engine.checkpoint(cp);
          assertThat(info.appliedIndex()).as(where).isEqualTo(index);
          try (Engine copy = Engine.open(cp, options)) {
            assertThat(contents(copy)).as(where + " checkpoint").isEqualTo(render(model));
          }
        } else {
          engine.awaitCompactions();
        }
      }
      assertThat(contents(engine)).as("seed " + seed + " final").isEqualTo(render(model));
      // The run must have exercised the machinery it claims to test.
      EngineStats stats = engine.stats();
      assertThat(flushes + stats.flushes()).as("flushes").isGreaterThan(10);
      assertThat(compactions + stats.compactions()).as("compactions").isGreaterThan(5);
      assertThat(gcRuns + stats.blobGcRuns()).as("blob GC runs").isGreaterThan(0);
      // The verifier is for a directory no engine has open: a background flush still running
      // here can schedule a compaction that replaces files the verifier has just read listed
      // (CI, 2026-12-01: "002988.sst: listed in the manifest but missing" on seed 4).
      for (SnapshotUnderTest s : snapshots) {
        s.snapshot().close();
      }
      snapshots.clear();
      engine.close();
      assertNoNativeMemoryLeft(engine, "seed " + seed + " final");
      assertThat(Verifier.verify(dir).problems()).isEmpty();
    } finally {
      for (SnapshotUnderTest s : snapshots) {
        s.snapshot().close();
      }
      engine.close();
    }
  }

  private static byte[] key(Random rnd) {
    int k = rnd.nextInt(400);
    String s =
        rnd.nextInt(10) == 0
            ? String.format("k%04d/%s", k, "x".repeat(k % 7))
            : String.format("k%04d", k);
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Long-tailed sizes: 80% under 120 B, 15% 200 B to 3 KiB, 4% 8 to 32 KiB, 1% 32 to 64 KiB (the
   * tiny options separate values of 1 KiB and more into blob files).
   */
  private static byte[] value(Random rnd) {
    int r = rnd.nextInt(100);
    int len =
        r < 80
            ? rnd.nextInt(120)
            : r < 95
                ? 200 + rnd.nextInt(2800)
                : r < 99 ? (8 << 10) + rnd.nextInt(24 << 10) : (32 << 10) + rnd.nextInt(32 << 10);
    byte[] v = new byte[len];
    rnd.nextBytes(v);
    if (rnd.nextBoolean()) {
      Arrays.fill(v, 0, len / 2, (byte) 'a'); // compressible half
    }
    return v;
  }

  private static void checkScan(
      ReadView view, TreeMap<byte[], byte[]> model, Random rnd, String where) {
    byte[] start = rnd.nextInt(4) == 0 ? null : key(rnd);
    byte[] end = rnd.nextInt(4) == 0 ? null : key(rnd);
    if (start != null && end != null && Keys.compare(start, end) > 0) {
      byte[] t = start;
      start = end;
      end = t;
    }
    int limit = rnd.nextInt(3) == 0 ? 0 : 1 + rnd.nextInt(50);
    boolean reverse = rnd.nextBoolean();
    boolean keysOnly = rnd.nextInt(4) == 0;
    NavigableMap<byte[], byte[]> range = model;
    if (start != null && end != null) {
      range = model.subMap(start, true, end, false);
    } else if (start != null) {
      range = model.tailMap(start, true);
    } else if (end != null) {
      range = model.headMap(end, false);
    }
    if (reverse) {
      range = range.descendingMap();
    }
    List<String> expected = new ArrayList<>();
    for (Map.Entry<byte[], byte[]> e : range.entrySet()) {
      if (limit > 0 && expected.size() == limit) {
        break;
      }
      expected.add(entry(e.getKey(), keysOnly ? null : e.getValue()));
    }
    ScanOptions o = new ScanOptions(start, end, limit, reverse, keysOnly);
    List<String> actual = new ArrayList<>();
    try (ScanIterator it = view.scan(o)) {
      while (it.next()) {
        actual.add(entry(it.key(), keysOnly ? null : it.value()));
      }
    }
    assertThat(actual).as(where + " scan " + o).isEqualTo(expected);
  }

  private static String entry(byte[] k, byte[] v) {
    return new String(k, StandardCharsets.UTF_8)
        + (v == null ? "" : "=" + Arrays.hashCode(v) + "/" + v.length);
  }

  static List<String> contents(ReadView view) {
    List<String> out = new ArrayList<>();
    try (ScanIterator it = view.scan(ScanOptions.all())) {
      while (it.next()) {
        out.add(entry(it.key(), it.value()));
      }
    }
    return out;
  }

  static List<String> render(TreeMap<byte[], byte[]> model) {
    List<String> out = new ArrayList<>();
    model.forEach((k, v) -> out.add(entry(k, v)));
    return out;
  }

  /**
   * Every table's native memory (index, filter, mapping) and every memtable chunk is freed once its
   * engine closed and its readers let go.
   */
  static void assertNoNativeMemoryLeft(Engine closed, String where) {
    assertThat(closed.tableMemory().openArenas()).as(where + ": tables not freed").isZero();
    assertThat(closed.tableMemory().bytes()).as(where + ": index and filter bytes").isZero();
    assertThat(closed.memtableMemory().liveChunks()).as(where + ": memtable chunks").isZero();
    assertThat(closed.memtableMemory().nativeBytes()).as(where + ": memtable bytes").isZero();
  }
}
