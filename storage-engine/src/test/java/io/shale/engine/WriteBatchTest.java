package io.shale.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code put} copies the caller's arrays; {@code putWithoutCopy} keeps them until applied. */
class WriteBatchTest {
  @TempDir Path dir;

  @Test
  void putCopiesSoTheCallerMayReuseItsArrays() throws Exception {
    byte[] key = "k".getBytes(UTF_8);
    byte[] value = "one".getBytes(UTF_8);
    WriteBatch batch = new WriteBatch().put(key, value);
    value[0] = 'X';
    key[0] = 'z';
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      e.apply(batch, 1);
      assertThat(e.get("k".getBytes(UTF_8))).asString(UTF_8).isEqualTo("one");
      assertThat(e.get("z".getBytes(UTF_8))).isNull();
    }
  }

  @Test
  void putWithoutCopyAppliesTheArraysAsTheyAreAtApplyAndNotLaterChanges() throws Exception {
    byte[] key = "k".getBytes(UTF_8);
    byte[] value = "one".getBytes(UTF_8);
    WriteBatch batch = new WriteBatch().putWithoutCopy(key, value);
    value[0] = 'O'; // before apply: the batch holds the caller's array
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      e.apply(batch, 1);
      value[0] = 'X'; // after apply: the memtable has its own copy
      assertThat(e.get("k".getBytes(UTF_8))).asString(UTF_8).isEqualTo("One");
    }
    assertThat(batch.byteSize()).isEqualTo(4);
  }

  @Test
  void putWithoutCopyChecksLikePut() {
    assertThatThrownBy(() -> new WriteBatch().putWithoutCopy("k".getBytes(UTF_8), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value must not be null");
    assertThatThrownBy(
            () ->
                new WriteBatch()
                    .putWithoutCopy(new byte[EngineOptions.MAX_KEY_BYTES + 1], new byte[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("exceeds the limit of " + EngineOptions.MAX_KEY_BYTES);
  }
}
