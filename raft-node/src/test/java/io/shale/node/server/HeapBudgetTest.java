package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class HeapBudgetTest {
  private static final Path SAMPLE = Paths.get("..", "ops", "config", "node.toml");
  private static final long MIB = 1L << 20;

  private static NodeConfig sample(String... overrides) {
    return NodeConfig.load(SAMPLE, List.of(overrides));
  }

  @Test
  void theShippedConfigurationFitsTheShippedHeapAndNoLess() {
    HeapBudget b = HeapBudget.of(sample());
    assertThat(b.misfit(512 * MIB)).isNull();
    assertThat(b.total()).isLessThanOrEqualTo(b.usable(512 * MIB));
    String why = b.misfit(256 * MIB);
    assertThat(why)
        .contains("-Xmx", "memory.heap_headroom", "watch.history_size")
        .contains("limits.max_inflight_write_bytes", "memory.raft_appends_in_flight");
  }

  @Test
  void everyPartFollowsItsKnob() throws Exception {
    Map<String, Long> base = parts(sample());
    Map<String, Long> more =
        parts(
            sample(
                "watch.history_size=64MiB",
                "memory.raft_log_cache=64MiB",
                "limits.max_inflight_write_bytes=48MiB"));
    assertThat(more.get("watch_history") - base.get("watch_history")).isEqualTo(40 * MIB);
    assertThat(more.get("raft_log_cache") - base.get("raft_log_cache")).isEqualTo(40 * MIB);
    assertThat(base).doesNotContainKey("engine_metadata"); // off the heap: see TableMemory
    // Two copies of each write in flight: the parsed request and its log entry.
    assertThat(more.get("requests_in_flight") - base.get("requests_in_flight")).isEqualTo(32 * MIB);
    // 2 other nodes x 48 MiB forwarded outgrow 4 appends of ~18 MiB.
    assertThat(more.get("raft_inbound")).isEqualTo(96 * MIB);
    NodeConfig big =
        NodeConfig.parse(
            Files.readString(SAMPLE)
                .replace("memtable_size = \"32MiB\"", "memtable_size = \"64MiB\""),
            List.of(),
            SAMPLE.getParent());
    assertThat(parts(big)).doesNotContainKey("memtables"); // native: see ChunkPool
    assertThat(HeapBudget.of(big).total())
        .as("memtables take no heap, whatever their size")
        .isEqualTo(HeapBudget.of(sample()).total());
  }

  @Test
  void aNodeWithoutLsmSettingsGetsTheNodesMemtableDefaults() {
    NodeConfig c =
        NodeConfig.parse(
            "[node]\nid = \"n1\"\ninsecure = true\n[[peers]]\nid = \"n1\"\n"
                + "raft_address = \"127.0.0.1:1\"\napi_address = \"127.0.0.1:2\"\n",
            List.of(),
            Paths.get("."));
    assertThat(c.engine().memtableSizeBytes()).isEqualTo(32 * MIB);
    assertThat(c.engine().maxImmutableMemtables()).isEqualTo(2);
    assertThat(HeapBudget.of(c).misfit(512 * MIB)).isNull();
  }

  /** node.toml's table of the parts says what the code computes, part by part and in total. */
  @Test
  void theSampleConfigurationsTableIsTrue() throws Exception {
    String text = Files.readString(SAMPLE);
    Matcher m = Pattern.compile("(?m)^#   ([a-z_]+) +(\\d+) MiB").matcher(text);
    Map<String, Long> documented = new java.util.HashMap<>();
    while (m.find()) {
      documented.put(m.group(1), Long.parseLong(m.group(2)));
    }
    HeapBudget b = HeapBudget.of(sample());
    for (HeapBudget.Part p : b.parts()) {
      assertThat(documented.get(p.name())).as(p.name()).isEqualTo(p.bytes() / MIB);
    }
    assertThat(documented.get("total")).isEqualTo(b.total() / MIB);
  }

  private static Map<String, Long> parts(NodeConfig c) {
    return HeapBudget.of(c).parts().stream()
        .collect(Collectors.toMap(HeapBudget.Part::name, HeapBudget.Part::bytes));
  }
}
