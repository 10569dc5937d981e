package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One flush writes every sealed memtable waiting for it into one level-0 table: the newest version
 * of each key survives, older versions and their overwritten values are dropped, and the persisted
 * index is the newest memtable's.
 */
class FlushMergeTest {
  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("key-%04d", i).getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] value(int i, int round) {
    byte[] v = new byte[120];
    Arrays.fill(v, (byte) ('a' + round));
    System.arraycopy(key(i), 0, v, 0, key(i).length);
    return v;
  }

  @Test
  void sealedMemtablesWaitingTogetherBecomeOneTable() throws Exception {
    EngineOptions options = TestOptions.tiny().withMaxImmutableMemtables(8);
    Map<Integer, byte[]> model = new HashMap<>();
    long index = 0;
    try (Engine e = Engine.open(dir, options)) {
      e.pauseCompactions();
      e.pauseFlushes();
      try {
        // 60 keys overwritten round after round until three memtables are sealed. A memtable is
        // sealed right after the write that fills it, so the mutable one is empty when we stop.
        int round = 0;
        while (e.stats().immutableMemtables() < 3) {
          for (int i = 0; i < 60 && e.stats().immutableMemtables() < 3; i++) {
            byte[] v = value(i, round % 20);
            WriteBatch b = new WriteBatch().put(key(i), v);
            model.put(i, v);
            if (i % 9 == 0) {
              b.delete(key(i + 1000));
              model.remove(i + 1000);
            } else if (i % 9 == 1) {
              b.put(key(i + 1000), v);
              model.put(i + 1000, v);
            }
            e.apply(b, ++index);
          }
          round++;
        }
        assertThat(round).as("every key written in more than one memtable").isGreaterThan(3);
        assertThat(e.stats().immutableMemtables()).isEqualTo(3);
        assertThat(e.stats().memtableBytes())
            .as("all bytes are in sealed memtables")
            .isGreaterThan(0);
      } finally {
        e.resumeFlushes();
      }
      e.flush();

      EngineStats stats = e.stats();
      assertThat(stats.immutableMemtables()).isZero();
      assertThat(stats.persistedAppliedIndex()).isEqualTo(index);
      EngineStats.LevelStats level0 = stats.levels().get(0);
      assertThat(level0.files()).as("one table for the three memtables").isEqualTo(1);
      // One entry per key ever written (puts and tombstones), not one per version.
      int keysWritten = 60 + 2 * ((60 + 8) / 9);
      assertThat(level0.entries()).isEqualTo(keysWritten);
      assertReads(e, model);
    }
    try (Engine e = Engine.open(dir, options)) {
      assertThat(e.persistedAppliedIndex()).isEqualTo(index);
      assertReads(e, model);
    }
  }

  private static void assertReads(Engine e, Map<Integer, byte[]> model) {
    for (int i = 0; i < 1060; i++) {
      byte[] expected = model.get(i);
      if (expected == null) {
        assertThat(e.get(key(i))).as("key %d", i).isNull();
      } else {
        assertThat(e.get(key(i))).as("key %d", i).isEqualTo(expected);
      }
    }
  }
}
