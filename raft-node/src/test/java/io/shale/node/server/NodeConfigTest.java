package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeConfigTest {
  private static final Path SAMPLE = Paths.get("..", "ops", "config", "node.toml");

  private static final String MINIMAL = """
      [node]
      id = "a"
      [[peers]]
      id = "a"
      raft_address = "h1:1"
      api_address = "h1:2"
      [[peers]]
      id = "b"
      raft_address = "h2:1"
      api_address = "h2:2"
      """;

  @Test
  void theSampleFileParsesWithItsDocumentedValues() {
    NodeConfig c = NodeConfig.load(SAMPLE, List.of());
    assertThat(c.id()).isEqualTo("n1");
    assertThat(c.peers()).extracting(NodeConfig.Peer::id).containsExactly("n1", "n2", "n3");
    assertThat(c.raft()).isEqualTo(NodeConfig.RaftSettings.defaults());
    assertThat(c.limits()).isEqualTo(NodeConfig.Limits.defaults());
    assertThat(c.dataDir()).isEqualTo(SAMPLE.toAbsolutePath().getParent().resolve("data/n1")
        .normalize());
    assertThat(c.httpAddress()).isEqualTo("127.0.0.1:7301");
    assertThat(c.engine().memtableSizeBytes()).isEqualTo(64L << 20);
  }

  @Test
  void overridesWinOverTheFile() {
    NodeConfig c = NodeConfig.load(SAMPLE, List.of("node.id=n2", "node.raft_address=127.0.0.1:7102",
        "node.api_address=127.0.0.1:7202", "raft.election_timeout=1s", "limits.max_value_size=1MiB"));
    assertThat(c.id()).isEqualTo("n2");
    assertThat(c.raftAddress()).isEqualTo("127.0.0.1:7102");
    assertThat(c.raft().electionTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.limits().maxValueBytes()).isEqualTo(1 << 20);
  }

  @Test
  void addressesDefaultToThePeerEntry() {
    NodeConfig c = NodeConfig.parse(MINIMAL, List.of("node.id=b"), Path.of("/srv"));
    assertThat(c.raftAddress()).isEqualTo("h2:1");
    assertThat(c.apiAddress()).isEqualTo("h2:2");
    assertThat(c.dataDir()).isEqualTo(Path.of("/srv/data/b"));
    assertThat(c.httpAddress()).isNull();
  }

  @Test
  void errorsNameTheKey() {
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL + "[raft]\nelection_timout = \"1s\"\n",
        List.of(), Path.of("/")))
        .hasMessageContaining("raft.election_timout").hasMessageContaining("election_timeout");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL + "[raft]\nelection_timeout = 300\n",
        List.of(), Path.of("/"))).hasMessageContaining("raft.election_timeout");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL, List.of("node.id=c"), Path.of("/")))
        .hasMessageContaining("node.id").hasMessageContaining("\"c\"");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL, List.of("raft.nope=1"), Path.of("/")))
        .hasMessageContaining("raft.nope");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL.replace("h2:1", "h2"), List.of(),
        Path.of("/"))).hasMessageContaining("peers[1].raft_address");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL + "[limits]\nmax_key_size = \"1MiB\"\n",
        List.of(), Path.of("/"))).hasMessageContaining("limits.max_key_size");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL + "[lsm]\nmemtable_sise = 1\n", List.of(),
        Path.of("/"))).hasMessageContaining("lsm.memtable_sise");
    assertThatThrownBy(() -> NodeConfig.parse("[node]\nid = \"a\"\n", List.of(), Path.of("/")))
        .hasMessageContaining("[[peers]]");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL + "[nodes]\nx = 1\n", List.of(),
        Path.of("/"))).hasMessageContaining("[nodes]");
  }
}
