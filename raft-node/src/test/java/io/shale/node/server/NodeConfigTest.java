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

  private static final String MINIMAL =
      """
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
    assertThat(c.dataDir())
        .isEqualTo(SAMPLE.toAbsolutePath().getParent().resolve("data/n1").normalize());
    assertThat(c.httpAddress()).isEqualTo("127.0.0.1:7301");
    assertThat(c.engine().memtableSizeBytes()).isEqualTo(32L << 20);
  }

  @Test
  void overridesWinOverTheFile() {
    NodeConfig c =
        NodeConfig.load(
            SAMPLE,
            List.of(
                "node.id=n2",
                "node.raft_address=127.0.0.1:7102",
                "node.api_address=127.0.0.1:7202",
                "raft.election_timeout=1s",
                "limits.max_value_size=1MiB"));
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
  void aRemovedKeyIsRefusedNamingWhatReplacesIt() {
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL + "[memory]\nengine_metadata = \"24MiB\"\n", List.of(), Path.of("/")))
        .hasMessageContaining("memory.engine_metadata is gone")
        .hasMessageContaining("lsm.index_and_filter_memory");
    NodeConfig c =
        NodeConfig.parse(
            MINIMAL + "[lsm]\nindex_and_filter_memory = \"64MiB\"\n", List.of(), Path.of("/"));
    assertThat(c.engine().indexAndFilterMemoryBytes()).isEqualTo(64L << 20);
  }

  @Test
  void handlersArePlatformThreadsUnlessVirtualIsAskedFor() {
    assertThat(NodeConfig.parse(MINIMAL, List.of(), Path.of("/")).limits().virtualHandlers())
        .isFalse();
    assertThat(
            NodeConfig.parse(MINIMAL, List.of("limits.virtual_handlers=true"), Path.of("/"))
                .limits()
                .virtualHandlers())
        .isTrue();
  }

  @Test
  void errorsNameTheKey() {
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL + "[raft]\nelection_timout = \"1s\"\n", List.of(), Path.of("/")))
        .hasMessageContaining("raft.election_timout")
        .hasMessageContaining("election_timeout");
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL + "[raft]\nelection_timeout = 300\n", List.of(), Path.of("/")))
        .hasMessageContaining("raft.election_timeout");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL, List.of("node.id=c"), Path.of("/")))
        .hasMessageContaining("node.id")
        .hasMessageContaining("\"c\"");
    assertThatThrownBy(() -> NodeConfig.parse(MINIMAL, List.of("raft.nope=1"), Path.of("/")))
        .hasMessageContaining("raft.nope");
    assertThatThrownBy(
            () -> NodeConfig.parse(MINIMAL.replace("h2:1", "h2"), List.of(), Path.of("/")))
        .hasMessageContaining("peers[1].raft_address");
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL + "[limits]\nmax_key_size = \"1MiB\"\n", List.of(), Path.of("/")))
        .hasMessageContaining("limits.max_key_size");
    assertThatThrownBy(
            () -> NodeConfig.parse(MINIMAL + "[lsm]\nmemtable_sise = 1\n", List.of(), Path.of("/")))
        .hasMessageContaining("lsm.memtable_sise");
    assertThatThrownBy(() -> NodeConfig.parse("[node]\nid = \"a\"\n", List.of(), Path.of("/")))
        .hasMessageContaining("[[peers]]");
    assertThatThrownBy(
            () -> NodeConfig.parse(MINIMAL + "[nodes]\nx = 1\n", List.of(), Path.of("/")))
        .hasMessageContaining("[nodes]");
  }

  @Test
  void everyTimingAndSizingKnobIsReadFromTheFile() {
    NodeConfig c =
        NodeConfig.parse(
            MINIMAL,
            List.of(
                "raft.admin_timeout=45s",
                "raft.group_commit_threads=2",
                "raft.group_commit_max_writes=64",
                "raft.group_commit_max_bytes=256KiB",
                "raft.snapshot_reload_wait=90s",
                "raft.snapshot_install_settle=50ms",
                "raft.checkpoint_lease=5m",
                "limits.scan_page_size=1MiB"),
            Path.of("/srv"));
    NodeConfig.RaftSettings r = c.raft();
    assertThat(r.adminTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(r.groupCommitThreads()).isEqualTo(2);
    assertThat(r.groupCommitMaxWrites()).isEqualTo(64);
    assertThat(r.groupCommitMaxBytes()).isEqualTo(256 << 10);
    assertThat(r.snapshotReloadWait()).isEqualTo(Duration.ofSeconds(90));
    assertThat(r.snapshotInstallSettle()).isEqualTo(Duration.ofMillis(50));
    assertThat(r.checkpointLease()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.limits().scanPageBytes()).isEqualTo(1 << 20);
    assertThat(r.stateMachine(c.limits().scanPageBytes()).reloadWait())
        .isEqualTo(Duration.ofSeconds(90));
  }

  @Test
  void aKnobOutOfItsRangeIsRefusedNamingTheKeyAndTheRange() {
    assertThatThrownBy(
            () ->
                NodeConfig.parse(MINIMAL, List.of("raft.group_commit_threads=65"), Path.of("/srv")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("raft.group_commit_threads")
        .hasMessageContaining("1 and 64");
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL, List.of("raft.group_commit_max_writes=0"), Path.of("/srv")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("raft.group_commit_max_writes");
    assertThatThrownBy(
            () -> NodeConfig.parse(MINIMAL, List.of("raft.checkpoint_lease=soon"), Path.of("/srv")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("raft.checkpoint_lease");
  }

  @Test
  void tlsFilesAreResolvedAgainstTheConfigDirectoryAndGoTogether() {
    assertThat(NodeConfig.parse(MINIMAL, List.of(), Path.of("/srv")).tls()).isNull();
    NodeConfig c =
        NodeConfig.parse(
            MINIMAL
                + "[tls]\nca_file = \"certs/ca.pem\"\ncert_file = \"/etc/shale/a.pem\"\n"
                + "key_file = \"certs/a-key.pem\"\n",
            List.of(),
            Path.of("/srv"));
    assertThat(c.tls().caFile()).isEqualTo(Path.of("/srv/certs/ca.pem"));
    assertThat(c.tls().certFile()).isEqualTo(Path.of("/etc/shale/a.pem"));
    assertThat(c.tls().keyFile()).isEqualTo(Path.of("/srv/certs/a-key.pem"));
    assertThat(c.tls().peerName()).isEqualTo("shale-node");
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL, List.of("tls.ca_file=ca.pem", "tls.cert_file=a.pem"), Path.of("/srv")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tls.ca_file, tls.cert_file and tls.key_file go together");
  }

  /**
   * Plaintext is a choice written down: insecure is off unless set, cannot be combined with [tls],
   * and a node with neither refuses to start, saying what to set.
   */
  @Test
  void plaintextMustBeChosenExplicitly() throws Exception {
    assertThat(NodeConfig.parse(MINIMAL, List.of(), Path.of("/srv")).insecure()).isFalse();
    assertThat(NodeConfig.parse(MINIMAL, List.of("node.insecure=true"), Path.of("/srv")).insecure())
        .isTrue();
    assertThatThrownBy(
            () ->
                NodeConfig.parse(
                    MINIMAL,
                    List.of(
                        "node.insecure=true",
                        "tls.ca_file=ca.pem",
                        "tls.cert_file=a.pem",
                        "tls.key_file=a-key.pem"),
                    Path.of("/srv")))
        .hasMessageContaining("node.insecure = true and [tls] are both set");
    assertThatThrownBy(
            () -> NodeConfig.parse(MINIMAL, List.of("node.insecure=maybe"), Path.of("/srv")))
        .hasMessageContaining("node.insecure must be true or false");
    NodeConfig neither =
        NodeConfig.parse(
            MINIMAL,
            List.of("node.data_dir=" + java.nio.file.Files.createTempDirectory("neither")),
            Path.of("/srv"));
    assertThatThrownBy(() -> io.shale.node.server.ShaleNode.start(neither))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[tls] is not set")
        .hasMessageContaining("node.insecure = true");
  }

  @Test
  void theSampleFileDocumentsEveryKey() throws Exception {
    String sample = java.nio.file.Files.readString(SAMPLE);
    for (String table : List.of("raft", "limits", "auth", "audit")) {
      for (String key : NodeConfig.KEYS.get(table)) {
        assertThat(sample)
            .as("ops/config/node.toml documents %s.%s", table, key)
            .containsPattern("(?m)^" + key + " = ");
      }
    }
    assertThat(sample).containsPattern("(?m)^# insecure = true$");
    for (String key : NodeConfig.KEYS.get("tls")) {
      assertThat(sample)
          .as("ops/config/node.toml documents tls.%s (commented: no certificates ship)", key)
          .containsPattern("(?m)^# " + key + " = ");
    }
  }
}
