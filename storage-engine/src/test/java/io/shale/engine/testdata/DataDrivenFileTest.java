package io.shale.engine.testdata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The script format itself: how cases, inputs and expectations are read. */
class DataDrivenFileTest {
  @TempDir Path tmp;

  @Test
  void casesAreSeparatedByBlankLinesAndCommentsAreSkipped() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("topic"));
    Path f = dir.resolve("a.txt");
    Files.writeString(
        f,
        """
        # a comment
        define x=1 flag
        line one
        line two
        ----
        ok

        query
        ----
        first
        second
        """);
    List<DataDrivenFile.Case> cases = DataDrivenFile.parse(f);
    assertThat(cases).hasSize(2);
    DataDrivenFile.Case c = cases.get(0);
    assertThat(c.line()).isEqualTo(2);
    assertThat(c.command()).isEqualTo("define");
    assertThat(c.arg("x", null)).isEqualTo("1");
    assertThat(c.has("flag")).isTrue();
    assertThat(c.input()).containsExactly("line one", "line two");
    assertThat(c.expected()).isEqualTo("ok");
    assertThat(cases.get(1).expected()).isEqualTo("first\nsecond");
  }

  @Test
  void aCaseWithoutItsSeparatorIsRefusedWithItsLine() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("topic"));
    Path f = dir.resolve("b.txt");
    Files.writeString(f, "\nquery\nno separator\n");
    assertThatThrownBy(() -> DataDrivenFile.parse(f)).hasMessageContaining("topic/b.txt:2");
  }
}
