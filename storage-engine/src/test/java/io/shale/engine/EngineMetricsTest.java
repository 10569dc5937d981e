package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The meters and the event log agree with the files' own properties. */
class EngineMetricsTest {
  @TempDir Path dir;

  private static double sum(SimpleMeterRegistry r, String name, String... tags) {
    return r.find(name).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  @Test
  void compactionKeyAndValueBytesMatchTheFilesProperties() throws IOException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Engine e = Engine.open(dir, TestOptions.tiny(), registry)) {
      e.pauseCompactions();
      Random rnd = new Random(1);
      for (int i = 0; i < 600; i++) {
        byte[] v = new byte[rnd.nextInt(300) + (i % 20 == 0 ? 2000 : 0)];
        rnd.nextBytes(v);
        e.apply(
            new WriteBatch()
                .put(String.format("k%05d", rnd.nextInt(400)).getBytes(StandardCharsets.UTF_8), v),
            i);
        if (i % 150 == 149) {
          e.flush();
        }
      }
      e.flush();
      Version before = VersionSet.readVersion(dir, 5);
      assertThat(before.files(0)).hasSizeGreaterThan(2);
      assertThat(before.deepestNonEmptyLevel()).isZero();
      long keyIn = before.files(0).stream().mapToLong(f -> f.properties().rawKeyBytes()).sum();
      long valueIn = before.files(0).stream().mapToLong(f -> f.properties().rawValueBytes()).sum();

      e.compactRange(); // exactly one compaction: level 0 into level 1
      Version after = VersionSet.readVersion(dir, 5);
      List<FileMetadata> out = after.files(1);
      long keyOut = out.stream().mapToLong(f -> f.properties().rawKeyBytes()).sum();
      long valueOut = out.stream().mapToLong(f -> f.properties().rawValueBytes()).sum();

      assertThat(sum(registry, "lsm.compaction.bytes", "direction", "read", "kind", "key"))
          .isEqualTo((double) keyIn);
      assertThat(sum(registry, "lsm.compaction.bytes", "direction", "read", "kind", "value"))
          .isEqualTo((double) valueIn);
      assertThat(sum(registry, "lsm.compaction.bytes", "direction", "written", "kind", "key"))
          .isEqualTo((double) keyOut);
      assertThat(sum(registry, "lsm.compaction.bytes", "direction", "written", "kind", "value"))
          .isEqualTo((double) valueOut);
      assertThat(keyOut).isLessThan(keyIn); // overwrites were dropped
      EngineStats s = e.stats();
      assertThat(s.compactionRead().keyBytes()).isEqualTo(keyIn);
      assertThat(s.compactionWritten().valueBytes()).isEqualTo(valueOut);

      // The event log's last compaction line carries the same per-file numbers.
      List<String> events = Files.readAllLines(dir.resolve("events.jsonl"));
      String compaction =
          events.stream()
              .filter(l -> l.contains("\"event\":\"compaction\""))
              .reduce((a, b2) -> b2)
              .orElseThrow();
      long loggedKeyIn = 0;
      int inputsAt = compaction.indexOf("\"inputs\":");
      int outputsAt = compaction.indexOf("\"outputs\":");
      var m =
          java.util.regex.Pattern.compile("\"key_bytes\":(\\d+)")
              .matcher(compaction.substring(inputsAt, outputsAt));
      while (m.find()) {
        loggedKeyIn += Long.parseLong(m.group(1));
      }
      assertThat(loggedKeyIn).isEqualTo(keyIn);
      assertThat(events).anyMatch(l -> l.contains("\"event\":\"flush\""));
      assertThat(events).allMatch(l -> l.startsWith("{\"v\":1,") && l.contains(",\"crc\":\""));

      // Point reads feed the Bloom and read-amplification meters.
      for (int i = 0; i < 200; i++) {
        e.get(String.format("k%05dx", i).getBytes(StandardCharsets.UTF_8)); // inside the range
        e.get(String.format("k%05d", i).getBytes(StandardCharsets.UTF_8));
      }
      assertThat(sum(registry, "lsm.bloom.checks")).isGreaterThanOrEqualTo(200);
      assertThat(sum(registry, "lsm.bloom.useful")).isGreaterThan(150);
      assertThat(registry.find("lsm.read.sstables_touched").summary().count()).isEqualTo(400);
      List<String> names =
          registry.getMeters().stream()
              .map(Meter::getId)
              .map(Meter.Id::getName)
              .distinct()
              .toList();
      assertThat(names)
          .contains(
              "lsm.compactions.in_progress",
              "lsm.level.files",
              "lsm.bloom.memory.bytes",
              "lsm.compaction.pending_bytes",
              "lsm.blob.live_bytes",
              "lsm.blob.dead_bytes",
              "lsm.pinned_obsolete_bytes",
              "lsm.write.delay",
              "lsm.flush.bytes",
              "lsm.compaction.count",
              "lsm.block_cache.hits");
      assertThat(registry.find("lsm.level.bytes").tag("level", "1").gauge().value())
          .isEqualTo((double) after.levelBytes(1));
    }
  }

  /**
   * A node that installs a snapshot closes its engine and opens another on the same registry: the
   * gauges must then read the new engine, not keep the first one's (Micrometer ignores a second
   * gauge of the same name and tags).
   */
  @Test
  void gaugesFollowAnEngineReopenedOnTheSameRegistry() throws IOException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Engine first = Engine.open(dir.resolve("a"), TestOptions.tiny(), registry)) {
      first.pauseCompactions();
      for (int i = 0; i < 3; i++) {
        first.apply(
            new WriteBatch().put(("k" + i).getBytes(StandardCharsets.UTF_8), new byte[100]), i + 1);
        first.flush();
      }
      assertThat(registry.find("lsm.level.files").tag("level", "0").gauge().value()).isEqualTo(3.0);
    }
    try (Engine second = Engine.open(dir.resolve("b"), TestOptions.tiny(), registry)) {
      second.apply(new WriteBatch().put("x".getBytes(StandardCharsets.UTF_8), new byte[100]), 1);
      second.flush();
      assertThat(registry.find("lsm.level.files").tag("level", "0").gauges()).hasSize(1);
      assertThat(registry.find("lsm.level.files").tag("level", "0").gauge().value()).isEqualTo(1.0);
      assertThat(registry.find("lsm.flush.count").counter().count()).isEqualTo(4.0);
    }
  }
}
