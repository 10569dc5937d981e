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
        byte[] v = new byte[rnd.nextInt(200)];
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
      return s.filter(p -> {
        String n = p.getFileName().toString();
        return switch (kind) {
          case "table" -> n.endsWith(".sst");
          case "manifest" -> n.startsWith("MANIFEST-");
          default -> n.equals("CURRENT");
        };
      }).sorted().toList();
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
    List<Path> files = files(kind);
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
    verifierDetectsEveryFlip("table", 120);
  }

  @Test
  void verifierDetectsFlipsInTheManifest() throws IOException {
    verifierDetectsEveryFlip("manifest", 400);
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
    for (String kind : List.of("table", "manifest", "CURRENT")) {
      for (Path f : files(kind)) {
        List<Long> offsets = sample(Files.size(f), rnd, 10);
        for (int i = 0; i < 6; i++) {
          long off = offsets.get(rnd.nextInt(offsets.size()));
          Path copy = tmp.resolve("copy-" + checked++);
          copyDir(db, copy);
          flip(copy.resolve(f.getFileName()), off);
          assertThatThrownBy(() -> {
            try (Engine e = Engine.open(copy, TestOptions.tiny())) {
              ModelBasedEngineTest.contents(e);
            }
          }).as("flip in %s at %d", f.getFileName(), off)
              .isInstanceOf(CorruptionException.class)
              .hasMessageContaining(f.getFileName().toString());
        }
      }
    }
    assertThat(checked).isGreaterThan(20);
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
}
