package io.shale.node.local;

import io.shale.engine.EngineOptions;
import io.shale.node.auth.AuthState;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import io.shale.node.transport.CertificateAuthority;
import io.shale.node.transport.ClusterCertificates;
import io.shale.node.transport.PeerTls;
import io.shale.node.transport.RaftTransport;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;

/**
 * The nodes of one cluster in this JVM, on free loopback ports, each with its directory under
 * {@code dir}, its gRPC API and its HTTP endpoints (on a free port too): for tests (Shale's own,
 * and users' through test-support's {@code ShaleCluster}) and for trying Shale in one process.
 * Nodes are named n1, n2, ...; stopping one and starting it again keeps its directory, as a
 * restarted process would. Not thread-safe.
 */
public final class LocalCluster implements AutoCloseable {
  private final Map<String, ShaleNode> nodes = new LinkedHashMap<>();

  /** Every node ever configured, members or not, by id. */
  private final Map<String, NodeConfig.Peer> peers = new LinkedHashMap<>();

  private final String clusterName;
  private final RaftGroup group;
  private final RaftProperties properties;
  private final Path dir;
  private final EngineOptions engineOptions;
  private final NodeConfig.RaftSettings raft;

  /** The cluster's CA when the Raft ports speak mutual TLS, else null. */
  private final CertificateAuthority authority;

  private final RaftTransport transport;

  /** {@code size} nodes with the default engine and Raft settings, started. */
  public LocalCluster(Path dir, int size) throws IOException {
    this(dir, size, EngineOptions.defaults());
  }

  public LocalCluster(Path dir, int size, EngineOptions engineOptions) throws IOException {
    this(dir, size, engineOptions, NodeConfig.RaftSettings.defaults());
  }

  public LocalCluster(Path dir, int size, EngineOptions engineOptions, NodeConfig.RaftSettings raft)
      throws IOException {
    this(dir, size, engineOptions, raft, true, null, "test-cluster");
  }

  /**
   * {@code size} nodes of cluster {@code name} (node.cluster), started on whatever their
   * directories {@code dir/n1...} hold: for example data restored from a backup.
   */
  public static LocalCluster named(Path dir, int size, String name) throws IOException {
    return new LocalCluster(
        dir, size, EngineOptions.defaults(), NodeConfig.RaftSettings.defaults(), true, null, name);
  }

  /** A cluster of {@code size} configured nodes, none started (start them with {@link #start}). */
  public static LocalCluster configuredOnly(Path dir, int size) throws IOException {
    return new LocalCluster(
        dir,
        size,
        EngineOptions.defaults(),
        NodeConfig.RaftSettings.defaults(),
        false,
        null,
        "test-cluster");
  }

  /**
   * {@code size} nodes, started, whose Raft ports speak mutual TLS: a throwaway CA under {@code
   * dir/certs} issues each node's certificate (for 127.0.0.1 and localhost).
   */
  public static LocalCluster withPeerTls(Path dir, int size) throws IOException {
    return withPeerTls(dir, size, EngineOptions.defaults(), NodeConfig.RaftSettings.defaults());
  }

  /** As {@link #withPeerTls(Path, int)}, with these engine and Raft settings. */
  public static LocalCluster withPeerTls(
      Path dir, int size, EngineOptions engineOptions, NodeConfig.RaftSettings raft)
      throws IOException {
    return new LocalCluster(
        dir,
        size,
        engineOptions,
        raft,
        true,
        CertificateAuthority.create("shale-local-ca", Duration.ofDays(7)),
        "test-cluster");
  }

  private LocalCluster(
      Path dir,
      int size,
      EngineOptions engineOptions,
      NodeConfig.RaftSettings raft,
      boolean startAll,
      CertificateAuthority authority,
      String clusterName)
      throws IOException {
    this.dir = dir;
    this.clusterName = clusterName;
    this.engineOptions = engineOptions;
    this.raft = raft;
    this.authority = authority;
    if (authority != null) {
      authority.writeCertificate(caFile());
      Instant now = Instant.now();
      authority
          .issue(AuthState.ROOT, List.of(), now.minusSeconds(300), now.plus(Duration.ofDays(7)))
          .write(
              ClusterCertificates.clientCertificate(certificates(), AuthState.ROOT),
              ClusterCertificates.clientKey(certificates(), AuthState.ROOT));
    }
    for (int i = 1; i <= size; i++) {
      newPeer("n" + i);
    }
    List<NodeConfig.Peer> members = new ArrayList<>(peers.values());
    group = ShaleNode.group(clusterName, members);
    properties = ShaleNode.properties(raft, NodeConfig.Limits.defaults());
    transport = new RaftTransport(properties, authority == null ? null : clientTls());
    if (startAll) {
      for (String id : peers.keySet()) {
        start(id);
      }
    }
  }

  /** Allocates ports for a node {@code id} that is not started. */
  public NodeConfig.Peer newPeer(String id) throws IOException {
    NodeConfig.Peer p =
        new NodeConfig.Peer(id, "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort());
    peers.put(id, p);
    if (authority != null) {
      authority
          .issueNode(List.of("127.0.0.1", "localhost"), Duration.ofDays(7))
          .write(certFile(id), keyFile(id));
    }
    return p;
  }

  /** Ports this process has handed out: a port is not handed out twice until the range is used. */
  private static final java.util.Set<Integer> PORTS_GIVEN =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * A port free now, below the kernel's ephemeral range (32768 and up on Linux): a port the kernel
   * hands out for port 0 can be taken by an outgoing connection between this check and the node's
   * bind, and tests make many connections. Never one handed out before by this process (until
   * 10,000 have been): the check closes its socket, so two nodes asking before either binds could
   * otherwise be given the same port, and the second failed to bind.
   */
  public static int freePort() throws IOException {
    java.util.concurrent.ThreadLocalRandom random =
        java.util.concurrent.ThreadLocalRandom.current();
    if (PORTS_GIVEN.size() > 10_000) {
      PORTS_GIVEN.clear();
    }
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = random.nextInt(20_000, 32_000);
      if (PORTS_GIVEN.contains(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(false);
        s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
      } catch (IOException taken) {
        continue;
      }
      if (PORTS_GIVEN.add(port)) {
        return port;
      }
    }
    throw new IOException("no free port found in 20000-31999 after 200 tries");
  }

  public NodeConfig config(String id) {
    NodeConfig.Peer self = peers.get(id);
    List<NodeConfig.Peer> members = new ArrayList<>();
    group.getPeers().forEach(p -> members.add(peers.get(p.getId().toString())));
    if (!members.contains(self)) {
      members.add(self);
    }
    return new NodeConfig(
        id,
        clusterName,
        dir.resolve(id),
        self.raftAddress(),
        self.apiAddress(),
        "127.0.0.1:0",
        members,
        raft,
        NodeConfig.Limits.defaults(),
        engineOptions,
        tlsFiles(id));
  }

  /** Node {@code id}'s {@code [tls]} files, or null when the Raft ports are plaintext. */
  public PeerTls.Files tlsFiles(String id) {
    return authority == null
        ? null
        : new PeerTls.Files(caFile(), certFile(id), keyFile(id), PeerTls.DEFAULT_PEER_NAME);
  }

  /**
   * The certificate directory of a cluster made {@link #withPeerTls}, laid out as {@code shalectl
   * cert} makes one: {@code ca.pem}, the nodes' files, and the client certificate of the user root
   * ({@code client.root.pem}, {@code client.root-key.pem}).
   */
  public Path certificates() {
    return dir.resolve("certs");
  }

  /** The CA of a cluster made {@link #withPeerTls}, or null. */
  public CertificateAuthority authority() {
    return authority;
  }

  private Path caFile() {
    return dir.resolve("certs").resolve("ca.pem");
  }

  private Path certFile(String id) {
    return dir.resolve("certs").resolve(id + ".pem");
  }

  private Path keyFile(String id) {
    return dir.resolve("certs").resolve(id + "-key.pem");
  }

  /** A node certificate for this process's own Ratis clients (tests acting as a node). */
  private PeerTls clientTls() {
    String id = "local-client";
    authority
        .issueNode(List.of("127.0.0.1", "localhost"), Duration.ofDays(7))
        .write(certFile(id), keyFile(id));
    return PeerTls.load(tlsFiles(id), java.time.Instant.now());
  }

  public ShaleNode start(String id) throws IOException {
    ShaleNode n = ShaleNode.start(config(id));
    nodes.put(id, n);
    return n;
  }

  /** Starts {@code id} (see {@link #newPeer}) outside the configuration, waiting to be added. */
  public ShaleNode startJoining(String id) throws IOException {
    ShaleNode n = ShaleNode.start(config(id), true);
    nodes.put(id, n);
    return n;
  }

  /** Stops node {@code id} (as a graceful shutdown would); its directory stays. */
  public void stop(String id) throws IOException {
    ShaleNode n = nodes.remove(id);
    if (n == null) {
      throw new IllegalArgumentException(
          "node " + id + " is not running; running: " + nodes.keySet());
    }
    n.close();
  }

  /** The running node {@code id}. */
  public ShaleNode node(String id) {
    ShaleNode n = nodes.get(id);
    if (n == null) {
      throw new IllegalArgumentException(
          "node " + id + " is not running; running: " + nodes.keySet());
    }
    return n;
  }

  /** The ids of the running nodes, in start order (a copy). */
  public List<String> running() {
    return List.copyOf(nodes.keySet());
  }

  /** The addresses of node {@code id}, running or not. */
  public NodeConfig.Peer peer(String id) {
    return peers.get(id);
  }

  /** Every node configured so far, members or not. */
  public List<NodeConfig.Peer> peers() {
    return List.copyOf(peers.values());
  }

  /** The API addresses (HOST:PORT) of every node configured so far: a client's endpoints. */
  public List<String> apiEndpoints() {
    return peers.values().stream().map(NodeConfig.Peer::apiAddress).toList();
  }

  /** The Raft group of the initial members. */
  public RaftGroup group() {
    return group;
  }

  /** The Raft properties every node runs with. */
  public RaftProperties properties() {
    return properties;
  }

  /** Writes a TOML file that starts node {@code id} as this cluster's member. */
  public Path writeConfigFile(String id) throws IOException {
    NodeConfig c = config(id);
    StringBuilder t = new StringBuilder();
    t.append("[node]\nid = \"")
        .append(id)
        .append("\"\ncluster = \"test-cluster\"\n")
        .append("data_dir = \"")
        .append(c.dataDir())
        .append("\"\n")
        .append("http_address = \"127.0.0.1:0\"\n")
        .append(c.tls() == null ? "insecure = true\n\n" : "\n");
    for (NodeConfig.Peer p : c.peers()) {
      t.append("[[peers]]\nid = \"")
          .append(p.id())
          .append("\"\nraft_address = \"")
          .append(p.raftAddress())
          .append("\"\napi_address = \"")
          .append(p.apiAddress())
          .append("\"\n\n");
    }
    PeerTls.Files tls = tlsFiles(id);
    if (tls != null) {
      t.append("[tls]\nca_file = \"")
          .append(tls.caFile())
          .append("\"\ncert_file = \"")
          .append(tls.certFile())
          .append("\"\nkey_file = \"")
          .append(tls.keyFile())
          .append("\"\n\n");
    }
    Path file = dir.resolve(id + ".toml");
    Files.writeString(file, t);
    return file;
  }

  /**
   * How this process's Ratis clients reach the nodes: with a node certificate when the Raft ports
   * speak mutual TLS.
   */
  public RaftTransport transport() {
    return transport;
  }

  /** A Ratis client of the initial group, with a patient retry policy (20 s). */
  public RaftClient client() {
    return transport
        .client()
        .setRaftGroup(group)
        .setRetryPolicy(
            RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                200, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
  }

  /** The id of a node that is leader and ready, waiting up to 20 s for one. */
  public String leader() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      for (Map.Entry<String, ShaleNode> n : nodes.entrySet()) {
        RaftServer.Division d;
        try {
          d = n.getValue().server().getDivision(group.getGroupId());
        } catch (IOException e) {
          continue;
        }
        if (d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
          return n.getKey();
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no leader within 20 s");
  }

  @Override
  public void close() throws IOException {
    for (ShaleNode n : nodes.values()) {
      n.close();
    }
    nodes.clear();
  }
}
