package io.shale.engine.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.FileMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GrandparentBoundaryTest {
  private static byte[] k(int i) {
    return String.format("k%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** Grandparent file i covers keys [100 i, 100 i + 99] and has 10 bytes. */
  private static List<FileMetadata> grandparents(int n) {
    List<FileMetadata> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          new FileMetadata(
              i + 1,
              10,
              new TableProperties(1, 0, 0, 0, 1, 0, 10, k(100 * i), k(100 * i + 99), 1, 1, 0, 0)));
    }
    return out;
  }

  @Test
  void cutsOnceTheOutputHasSpannedMoreThanTheLimit() {
    GrandparentBoundary b = new GrandparentBoundary(grandparents(100), 35);
    List<Integer> cuts = new ArrayList<>();
    for (int key = 0; key < 10_000; key += 7) {
      if (b.test(k(key))) {
        cuts.add(key);
      }
    }
    // 35 bytes = 3.5 files: a cut once four whole grandparent files (400 keys) have been passed.
    assertThat(cuts).isNotEmpty();
    int previous = 0;
    for (int c : cuts) {
      assertThat(c - previous).isBetween(393, 407);
      previous = c;
    }
    assertThat(cuts).hasSizeBetween(22, 25);
  }

  @Test
  void sparseKeysCutBeforeTheKeyThatWouldSpanTooMuch() {
    GrandparentBoundary b = new GrandparentBoundary(grandparents(100), 35);
    assertThat(b.test(k(5))).isFalse();
    assertThat(b.test(k(150))).isFalse(); // passed file 1 only
    assertThat(b.test(k(9_950))).isTrue(); // would span files 2..99: a new output starts here
    assertThat(b.test(k(9_960))).isFalse();
  }

  @Test
  void neverCutsWithoutGrandparentsOrBeforeTheFirstKey() {
    GrandparentBoundary none = new GrandparentBoundary(List.of(), 0);
    for (int key = 0; key < 1000; key++) {
      assertThat(none.test(k(key))).isFalse();
    }
    GrandparentBoundary b = new GrandparentBoundary(grandparents(100), 35);
    assertThat(b.test(k(9_999)))
        .as("files passed before the first key are not the output's")
        .isFalse();
  }
}
