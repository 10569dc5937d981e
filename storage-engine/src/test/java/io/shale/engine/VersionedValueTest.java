package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The modification index of a key follows it through memtable, flush, compaction and reopen. */
class VersionedValueTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void theIndexIsTheBatchThatLastWroteTheKey() throws Exception {
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      e.apply(new WriteBatch().put(b("a"), b("1")).put(b("b"), b("1")), 5);
      e.apply(new WriteBatch().put(b("a"), b("2")), 9);
      assertThat(e.getVersioned(b("a")).index()).isEqualTo(9);
      assertThat(e.getVersioned(b("b")).index()).isEqualTo(5);
      e.flush();
      e.apply(new WriteBatch().delete(b("b")), 12);
      assertThat(e.getVersioned(b("b"))).isNull();
      assertThat(e.getVersioned(b("a")).value()).isEqualTo(b("2"));
      assertThat(e.getVersioned(b("a")).index()).isEqualTo(9);
      byte[] big = new byte[20_000]; // a blob value: resolved, index kept
      e.apply(new WriteBatch().put(b("c"), big), 15);
      e.compactRange();
      assertThat(e.getVersioned(b("c")).value()).isEqualTo(big);
      assertThat(e.getVersioned(b("c")).index()).isEqualTo(15);
      assertThat(e.getVersioned(b("a")).index()).isEqualTo(9);
    }
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      assertThat(e.getVersioned(b("a")).index()).isEqualTo(9);
      assertThat(e.getVersioned(b("missing"))).isNull();
    }
  }
}
