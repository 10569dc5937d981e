package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.io.CorruptionException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large values go to blob files at flush, compaction moves only pointers, dead bytes are counted
 * exactly, GC reclaims files past the threshold, scans read blobs lazily and with read-ahead.
 */
class BlobSeparationTest {
  private static final int LARGE = 10 << 10;

  @TempDir Path dir;

  /** 8 KiB threshold (the seed's) over the tiny options, 1 MiB blob files. */
  private static EngineOptions options() {
    return TestOptions.tiny().withBlob(new BlobOptions(true, 8192, 0.5, 1 << 20, 256 << 10, false));
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(long seed, int size) {
    byte[] v = new byte[size];
    new Random(seed).nextBytes(v);
    return v;
  }

  private static String key(int i) {
    return String.format("key-%04d", i);
  }

  /** 50 large values (keys 0..49, 10 KiB) and 50 small ones (keys 50..99), in one flush. */
  private static void load(Engine e, long index, int version) {
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < 100; i++) {
      batch.put(b(key(i)), value(version * 1000L + i, i < 50 ? LARGE : 100));
    }
    e.apply(batch, index);
    e.flush();
  }

  private static Set<Long> blobNumbers(Engine e) {
    return e.stats().blobFiles().stream()
        .map(EngineStats.BlobFileStats::number)
        .collect(Collectors.toSet());
  }

  @Test
  void largeValuesLeaveTheTablesAndCompactionMovesOnlyPointers() throws IOException {
    try (Engine e = Engine.open(dir, options())) {
      load(e, 1, 1);
      EngineStats s = e.stats();
      assertThat(s.blobFiles()).hasSize(1);
      assertThat(s.blobFiles().get(0).valueBytes()).isEqualTo(50L * LARGE);
      assertThat(s.blobLiveBytes()).isEqualTo(50L * LARGE);
      assertThat(s.levels().get(0).blobBytes()).isEqualTo(50L * LARGE);
      assertThat(s.totalBytes())
          .as("tables hold keys, small values and pointers")
          .isLessThan(20_000);
      Set<Long> blobsBefore = blobNumbers(e);

      e.compactRange();
      s = e.stats();
      assertThat(blobNumbers(e)).isEqualTo(blobsBefore);
      assertThat(s.compactionWritten().blobBytes()).isZero();
      assertThat(s.compactionWritten().valueBytes()).isLessThan(50 * 100 + 50 * 30);
      for (int i = 0; i < 100; i++) {
        assertThat(e.get(b(key(i)))).isEqualTo(value(1000L + i, i < 50 ? LARGE : 100));
      }
    }
  }

  @Test
  void deadBytesAreCountedExactlyAndGcReclaimsTheFile() throws IOException {
    try (Engine e = Engine.open(dir, options())) {
      load(e, 1, 1);
      long first = blobNumbers(e).iterator().next();
      // Overwrite 20 of the 50 large values: once compaction drops the old pointers, exactly
      // 20 x 10 KiB of the first file are dead (40%, under the 50% threshold).
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 20; i++) {
        batch.put(b(key(i)), value(2000L + i, LARGE));
      }
      e.apply(batch, 2);
      e.compactRange();
      EngineStats.BlobFileStats f =
          e.stats().blobFiles().stream().filter(x -> x.number() == first).findFirst().orElseThrow();
      assertThat(f.deadBytes()).isEqualTo(20L * LARGE);
      assertThat(f.liveBytes()).isEqualTo(30L * LARGE);
      assertThat(f.garbageRatio()).isEqualTo(0.4);
      assertThat(e.stats().blobGcRuns()).isZero();

      // Ten more make it 60%: GC relocates the 20 live values and the file goes.
      batch = new WriteBatch();
      for (int i = 20; i < 30; i++) {
        batch.put(b(key(i)), value(3000L + i, LARGE));
      }
      e.apply(batch, 3);
      e.compactRange();
      e.awaitCompactions();
      EngineStats s = e.stats();
      assertThat(blobNumbers(e)).doesNotContain(first);
      assertThat(Files.exists(dir.resolve(String.format("%06d.blob", first)))).isFalse();
      assertThat(s.blobGcRuns()).isGreaterThanOrEqualTo(1);
      assertThat(s.blobGcRelocatedBytes()).isEqualTo(20L * LARGE);
      assertThat(s.blobDeadBytes()).isZero();
      for (int i = 0; i < 50; i++) {
        long seed = i < 20 ? 2000L + i : i < 30 ? 3000L + i : 1000L + i;
        assertThat(e.get(b(key(i)))).as(key(i)).isEqualTo(value(seed, LARGE));
      }
    }
    assertThat(Verifier.verify(dir).problems()).isEmpty();
  }

  @Test
  void keysOnlyScansNeverTouchBlobFilesAndValueScansReadAhead() throws IOException {
    try (Engine e = Engine.open(dir, options())) {
      load(e, 1, 1);
      try (ScanIterator it = e.scan(ScanOptions.all())) {
        int n = 0;
        while (it.next()) {
          int i = Integer.parseInt(new String(it.key(), StandardCharsets.UTF_8).substring(4));
          assertThat(it.value()).isEqualTo(value(1000L + i, i < 50 ? LARGE : 100));
          n++;
        }
        assertThat(n).isEqualTo(100);
        // 500 KiB of values in key order: exact reads until the third sequential one, then
        // windows of 64, 128 and 256 KiB: 6 or 7 reads, not 50.
        assertThat(it.blobReads()).isBetween(3L, 7L);
      }
      // Damage every value byte of the blob file: keys-only scans still work, value reads fail.
      Path blob = dir.resolve(String.format("%06d.blob", blobNumbers(e).iterator().next()));
      long size = Files.size(blob);
      try (RandomAccessFile f = new RandomAccessFile(blob.toFile(), "rw")) {
        for (long p = 16; p < size - 28; p += 97) {
          f.seek(p);
          int x = f.read();
          f.seek(p);
          f.write(x ^ 0xff);
        }
      }
      try (ScanIterator it = e.scan(ScanOptions.all().withKeysOnly())) {
        int n = 0;
        while (it.next()) {
          n++;
        }
        assertThat(n).isEqualTo(100);
        assertThat(it.blobReads()).isZero();
      }
      assertThatThrownBy(
              () -> {
                try (ScanIterator it = e.scan(ScanOptions.all())) {
                  while (it.next()) {
                    it.value();
                  }
                }
              })
          .isInstanceOf(CorruptionException.class)
          .hasMessageContaining(blob.getFileName().toString());
    }
  }

  @Test
  void collectingBlobGarbageCostsInProportionToTheGarbageNotToTheTree() throws IOException {
    // Each flush holds a few large values written once (they keep every blob file partly live),
    // large values of hot keys overwritten again and again (most of each file turns to garbage),
    // and small inline values spread over the key space (the tables outweigh the blob garbage).
    // Rewriting the tables that point into a file to reclaim it would rewrite the tree each time.
    java.util.Map<String, byte[]> model = new java.util.HashMap<>();
    Random r = new Random(7);
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      long index = 0;
      for (int round = 0; round < 120; round++) {
        WriteBatch batch = new WriteBatch();
        for (int j = 0; j < 40; j++) {
          String k;
          int size;
          if (j < 6) {
            k = key(r.nextInt(1000)) + "-written-once-" + round; // spread over every table
            size = 2048;
          } else if (j < 16) {
            k = key(r.nextInt(20) * 50);
            size = 2048;
          } else {
            k = key(r.nextInt(1000));
            size = 300;
          }
          byte[] v = value(r.nextLong(), size);
          batch.put(b(k), v);
          model.put(k, v);
        }
        e.apply(batch, ++index);
        if (round % 3 == 2) {
          e.flush();
        }
      }
      e.flush();
      e.awaitCompactions();
      EngineStats s = e.stats();
      assertThat(s.blobBytesReclaimed()).isPositive();
      // Rewriting the referencing tables wrote 3.5 bytes per byte reclaimed on this workload;
      // values moved by compactions out of files at least half dead cost at most one once their
      // file is dropped. Bytes are counted as written when moved and as reclaimed when the file
      // goes, so a file still being emptied when compactions stop counts only its moved values.
      // The bound leaves room for that, not for 3.5.
      assertThat((double) s.blobGcBytesWritten())
          .as("bytes written to collect blob garbage, per byte reclaimed")
          .isLessThanOrEqualTo(1.5 * s.blobBytesReclaimed());
      assertThat(s.blobDeadBytes())
          .as("dead blob bytes left")
          .isLessThanOrEqualTo(s.blobLiveBytes());
      model.forEach((k, v) -> assertThat(e.get(b(k))).as(k).isEqualTo(v));
    }
  }

  @Test
  void overwritingLargeValuesKeepsDiskUsageBounded() throws IOException {
    int keys = 30;
    int size = 16 << 10;
    try (Engine e = Engine.open(dir, options())) {
      long index = 0;
      for (int round = 0; round < 40; round++) {
        WriteBatch batch = new WriteBatch();
        for (int i = 0; i < keys; i++) {
          batch.put(b(key(i)), value(round * 100L + i, size));
        }
        e.apply(batch, ++index);
        if (round % 4 == 3) {
          e.flush();
        }
      }
      e.compactRange(); // drop the shadowed pointers so their bytes count as dead
      e.awaitCompactions();
      EngineStats s = e.stats();
      long live = (long) keys * size;
      assertThat(s.blobLiveBytes()).isEqualTo(live);
      // Files whose every value was overwritten are dropped by the compactions that count them
      // dead.
      assertThat(s.blobBytesReclaimed()).isPositive();
      assertThat(s.blobGcBytesWritten()).isLessThanOrEqualTo(s.blobBytesReclaimed());
      long onDisk = 0;
      try (var files = Files.list(dir)) {
        for (Path p : files.toList()) {
          String n = p.getFileName().toString();
          if (n.endsWith(".blob") || n.endsWith(".sst")) {
            onDisk += Files.size(p);
          }
        }
      }
      System.out.printf(
          "live %d bytes, on disk %d bytes (%.2fx), %d GC runs%n",
          live, onDisk, (double) onDisk / live, s.blobGcRuns());
      assertThat(onDisk).isLessThan((long) (2.2 * live));
      for (int i = 0; i < keys; i++) {
        assertThat(e.get(b(key(i)))).isEqualTo(value(39 * 100L + i, size));
      }
    }
  }

  @Test
  void aSnapshotKeepsACollectedBlobFileReadable() throws IOException {
    try (Engine e = Engine.open(dir, options())) {
      load(e, 1, 1);
      long first = blobNumbers(e).iterator().next();
      try (Snapshot snap = e.snapshot()) {
        load(e, 2, 2); // every large value overwritten: the first file is all garbage
        e.compactRange();
        e.awaitCompactions();
        assertThat(blobNumbers(e)).doesNotContain(first);
        Path old = dir.resolve(String.format("%06d.blob", first));
        assertThat(Files.exists(old)).as("pinned by the snapshot").isTrue();
        assertThat(snap.get(b(key(7)))).isEqualTo(value(1007, LARGE));
        assertThat(e.get(b(key(7)))).isEqualTo(value(2007, LARGE));
      }
      e.awaitCompactions(); // the file goes on the engine's deletion thread
      assertThat(Files.exists(dir.resolve(String.format("%06d.blob", first)))).isFalse();
    }
  }

  @Test
  void aSeparatedValueSurvivesReopenAndCheckpoint() throws IOException {
    try (Engine e = Engine.open(dir, options())) {
      load(e, 1, 1);
      CheckpointInfo cp = e.checkpoint(dir.resolveSibling(dir.getFileName() + "-cp"));
      assertThat(cp.tableFiles()).anyMatch(n -> n.endsWith(".blob"));
    }
    for (Path p : List.of(dir, dir.resolveSibling(dir.getFileName() + "-cp"))) {
      try (Engine e = Engine.open(p, options())) {
        assertThat(e.get(b(key(3)))).isEqualTo(value(1003, LARGE));
      }
      assertThat(Verifier.verify(p).problems()).isEmpty();
    }
  }
}
