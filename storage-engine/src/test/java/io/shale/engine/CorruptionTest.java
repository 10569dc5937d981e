package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.CorruptionException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flips one byte at sampled offsets of every kind of file (tables, manifest, CURRENT) and checks
 * that each flip is reported as corruption naming the file: by the verifier on the untouched
 * directory, and by the engine itself (at open or at the read that touches the byte) on a copy.
 */
class CorruptionTest {
  @TempDir Path tmp;
  private Path db;

  @BeforeEach
  void buildDatabase() throws IOException {
    db = tmp.resolve("db");
    Random rnd = new Random(3);
    try (Engine e = Engine.open(db, TestOptions.tiny())) {
      for (int i = 0; i < 3000; i++) {
        WriteBatch b = new WriteBatch();
        // One value in ten is large enough for a blob file (the tiny options separate >= 1 KiB).
        byte[] v = new byte[i % 10 == 0 ? 1024 + rnd.nextInt(3000) : rnd.nextInt(200)];
        rnd.nextBytes(v);
        b.put(String.format("key-%06d", rnd.nextInt(5000)).getBytes(StandardCharsets.UTF_8), v);
        if (i % 7 == 0) {
          b.delete(String.format("key-%06d", rnd.nextInt(5000)).getBytes(StandardCharsets.UTF_8));
        }
        e.apply(b, i);
      }
      e.compactRange();
      for (int i = 3000; i < 3400; i++) {
        WriteBatch b = new WriteBatch();
        b.put(String.format("key-%06d", i).getBytes(StandardCharsets.UTF_8), new byte[50]);
        e.apply(b, i);
      }
    }
    assertThat(Verifier.verify(db).problems()).isEmpty();
  }

  private List<Path> files(String kind) throws IOException {
    try (Stream<Path> s = Files.list(db)) {
      return s.filter(
              p -> {
                String n = p.getFileName().toString();
                return switch (kind) {
                  case "table" -> n.endsWith(".sst");
                  case "manifest" -> n.startsWith("MANIFEST-");
                  case "blob" -> n.endsWith(".blob");
                  default -> n.equals("CURRENT");
                };
              })
          .sorted()
          .toList();
    }
  }

  /** Offsets to flip: the first and last 80 bytes (headers, footers) and a random sample. */
  private static List<Long> sample(long size, Random rnd, int randomCount) {
    TreeSet<Long> offsets = new TreeSet<>();
    for (long i = 0; i < Math.min(80, size); i++) {
      offsets.add(i);
      offsets.add(size - 1 - i);
    }
    for (int i = 0; i < randomCount; i++) {
      offsets.add((long) rnd.nextInt((int) size));
    }
    return new ArrayList<>(offsets);
  }

  private static void flip(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(offset);
      int b = f.read();
      f.seek(offset);
      f.write(b ^ 0x20);
    }
  }

  private void verifierDetectsEveryFlip(String kind, int randomPerFile) throws IOException {
    Random rnd = new Random(kind.hashCode());
    List<Path> all = files(kind);
    List<Path> files = all.subList(0, Math.min(3, all.size())); // each flip re-verifies everything
    assertThat(files).as("files of kind " + kind).isNotEmpty();
    int flips = 0;
    for (Path f : files) {
      for (long off : sample(Files.size(f), rnd, randomPerFile)) {
        flip(f, off);
        try {
          List<String> problems = Verifier.verify(db).problems();
          assertThat(problems).as("flip at %s offset %d", f.getFileName(), off).isNotEmpty();
          assertThat(String.join("\n", problems)).contains(f.getFileName().toString());
        } finally {
          flip(f, off); // restore
        }
        flips++;
      }
    }
    assertThat(Verifier.verify(db).problems()).isEmpty();
    assertThat(flips).isGreaterThan(files.size());
  }

  @Test
  void verifierDetectsFlipsInTables() throws IOException {
    verifierDetectsEveryFlip("table", 100);
  }

  @Test
  void verifierDetectsFlipsInTheManifest() throws IOException {
    verifierDetectsEveryFlip("manifest", 400);
  }

  @Test
  void verifierDetectsFlipsInBlobFiles() throws IOException {
    verifierDetectsEveryFlip("blob", 100);
  }

  @Test
  void verifierDetectsFlipsInCurrent() throws IOException {
    verifierDetectsEveryFlip("CURRENT", 0);
  }

  /** Opening and reading everything must fail with CorruptionException, never return data. */
  @Test
  void engineReportsFlipsAtOpenOrOnRead() throws IOException {
    Random rnd = new Random(11);
    int checked = 0;
    for (String kind : List.of("table", "manifest", "CURRENT", "blob")) {
      for (Path f : files(kind)) {
        // In a blob file, reads verify the header, the footer and the values they return (the
        // key copies kept for GC are checked by the verifier, above).
        List<Long> offsets =
            kind.equals("blob") ? blobValueOffsets(f, rnd) : sample(Files.size(f), rnd, 10);
        for (int i = 0; i < 6 && !offsets.isEmpty(); i++) {
          long off = offsets.get(rnd.nextInt(offsets.size()));
          Path copy = tmp.resolve("copy-" + checked++);
          copyDir(db, copy);
          flip(copy.resolve(f.getFileName()), off);
          Throwable thrown =
              org.assertj.core.api.Assertions.catchThrowable(
                  () -> {
                    try (Engine e = Engine.open(copy, TestOptions.tiny())) {
                      ModelBasedEngineTest.contents(e);
                    }
                  });
          assertThat(thrown)
              .as("flip in %s at %d of %d", f.getFileName(), off, Files.size(f))
              .isInstanceOf(CorruptionException.class)
              .hasMessageContaining(f.getFileName().toString());
        }
      }
    }
    assertThat(checked).isGreaterThan(20);
  }

  private static List<Long> blobValueOffsets(Path blob, Random rnd) throws IOException {
    List<Long> offsets = new ArrayList<>();
    long size = Files.size(blob);
    for (long i = 0; i < 16; i++) {
      offsets.add(i);
    }
    for (long i = size - 28; i < size; i++) {
      offsets.add(i);
    }
    for (var rec : liveRecords(blob)) {
      offsets.add(rec.pointer().offset() + rnd.nextInt(rec.pointer().length()));
    }
    // A blob file whose values are all dead is never opened by reads (GC deletes it unread).
    return offsets.size() == 16 + 28 ? List.of() : offsets;
  }

  /**
   * The records of {@code blob} that the current version still reads (a dead value, overwritten or
   * deleted since, is never read again), checked on a copy of the database.
   */
  private static List<io.shale.engine.blob.BlobFileReader.Record> liveRecords(Path blob)
      throws IOException {
    long number = Long.parseLong(blob.getFileName().toString().replace(".blob", ""));
    List<io.shale.engine.blob.BlobFileReader.Record> records = new ArrayList<>();
    try (var r = io.shale.engine.blob.BlobFileReader.open(blob, number)) {
      r.forEachRecord(records::add);
    }
    Path copy = blob.getParent().resolveSibling("live-check-" + number);
    copyDir(blob.getParent(), copy);
    List<io.shale.engine.blob.BlobFileReader.Record> live = new ArrayList<>();
    try (Engine e = Engine.open(copy, TestOptions.tiny());
        var r = io.shale.engine.blob.BlobFileReader.open(blob, number)) {
      for (var rec : records) {
        if (java.util.Arrays.equals(e.get(rec.key()), r.read(rec.pointer()))) {
          live.add(rec);
        }
      }
    }
    return live;
  }

  @Test
  void corruptBlobValueFailsTheReadWithFileAndOffset() throws IOException {
    // The blob file with the most live values (which file that is depends on flush timing).
    Path blob = null;
    List<io.shale.engine.blob.BlobFileReader.Record> live = List.of();
    for (Path candidate : files("blob")) {
      var l = liveRecords(candidate);
      if (l.size() > live.size()) {
        blob = candidate;
        live = l;
      }
    }
    assertThat(live).hasSizeGreaterThanOrEqualTo(2);
    var victim = live.get(live.size() / 2);
    var other = live.get(0);
    flip(blob, victim.pointer().offset() + 3);
    try (Engine e = Engine.open(db, TestOptions.tiny())) {
      String name = blob.getFileName().toString();
      assertThatThrownBy(() -> e.get(victim.key()))
          .isInstanceOf(CorruptionException.class)
          .hasMessageContaining(name)
          .hasMessageContaining("offset " + victim.pointer().offset());
      // Other values of the same file still read.
      assertThat(e.get(other.key())).isNotNull();
    }
  }

  @Test
  void truncatedTableIsReportedWithItsName() throws IOException {
    Path table = files("table").get(0);
    byte[] all = Files.readAllBytes(table);
    Files.write(table, java.util.Arrays.copyOf(all, all.length - 10));
    assertThatThrownBy(() -> Engine.open(db, TestOptions.tiny()))
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining(table.getFileName().toString());
  }

  private static void copyDir(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> s = Files.list(from)) {
      for (Path p : s.toList()) {
        if (!p.getFileName().toString().equals("LOCK")) {
          Files.copy(p, to.resolve(p.getFileName()));
        }
      }
    }
  }

  /**
   * A blob file replaced by another engine's file of the same name and size (every record of it
   * sound, so only the tables' pointers can tell): the verifier resolves every pointer and names
   * the keys whose values are not what their pointers say.
   */
  @Test
  void verifierFindsPointersIntoAnotherEnginesBlobFileOfTheSameNameAndSize() throws IOException {
    Path a = tmp.resolve("a");
    Path b = tmp.resolve("b");
    for (Path d : List.of(a, b)) {
      Random sizes = new Random(5);
      Random bytes = new Random(d.equals(a) ? 6 : 7);
      // One memtable holds every value, so both engines write the same layout: one flush, blob
      // files cut at the same sizes.
      try (Engine e = Engine.open(d, TestOptions.tiny().withMemtableSize(4 << 20))) {
        e.pauseCompactions();
        for (int i = 0; i < 200; i++) {
          byte[] v = new byte[1024 + sizes.nextInt(2000)];
          bytes.nextBytes(v);
          e.apply(
              new WriteBatch()
                  .put(String.format("key-%04d", i).getBytes(StandardCharsets.UTF_8), v),
              i + 1);
        }
        e.flush();
      }
    }
    Verifier.Report sound = Verifier.verify(a);
    assertThat(sound.problems()).isEmpty();
    assertThat(sound.blobPointers()).isEqualTo(200);
    Path victim;
    try (Stream<Path> s = Files.list(a)) {
      victim = s.filter(p -> p.toString().endsWith(".blob")).sorted().findFirst().orElseThrow();
    }
    Path other = b.resolve(victim.getFileName());
    assertThat(Files.size(other)).isEqualTo(Files.size(victim));
    Files.copy(other, victim, java.nio.file.StandardCopyOption.REPLACE_EXISTING);

    List<String> problems = Verifier.verify(a).problems();
    assertThat(problems)
        .isNotEmpty()
        .allSatisfy(
            p ->
                assertThat(p)
                    .contains("points to blob file")
                    .contains("key \"key-")
                    .contains("checksum mismatch"));
  }
}
