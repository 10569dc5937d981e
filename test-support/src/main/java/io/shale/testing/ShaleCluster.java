package io.shale.testing;

import io.shale.client.ShaleClient;
import io.shale.engine.EngineOptions;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that runs a real Shale cluster for a test (N nodes in the test's JVM on free
 * loopback ports, with real Raft, real gRPC and real files in a temporary directory), hands out
 * clients and removes everything afterwards:
 *
 * <pre>{@code
 * @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();
 * @Test void storesThings(ShaleClient client) { client.put("k", "v"); } // or cluster.client()
 * }</pre>
 *
 * <p>In a {@code static} field the cluster lives for the whole class; in an instance field, one per
 * test. A leader is elected before the first test runs. Tests may {@link #stop} and {@link #start}
 * nodes to exercise failover; {@link ShaleClient} parameters of test methods receive {@link
 * #client()}.
 */
public final class ShaleCluster
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver {
  private final int size;
  private final EngineOptions engineOptions;
  private final NodeConfig.RaftSettings raftSettings;
  private final Consumer<ShaleClient.Builder> clientSettings;
  private LocalCluster cluster;
  private Path dir;
  private ShaleClient client;
  private final List<ShaleClient> clients = new ArrayList<>();
  private boolean perTest;

  private ShaleCluster(Builder b) {
    this.size = b.size;
    this.engineOptions = b.engineOptions;
    this.raftSettings = b.raftSettings;
    this.clientSettings = b.clientSettings;
  }

  /** The Java feature release the nodes need: they run in the test's JVM. */
  static final int NODE_JAVA = 25;

  /**
   * A cluster to configure.
   *
   * @throws UnsupportedOperationException on a JVM older than Java 25, which cannot run the nodes
   *     (the SDK itself runs on 17: only the embedded cluster needs 25)
   */
  public static Builder builder() {
    int running = Runtime.version().feature();
    if (running < NODE_JAVA) {
      throw new UnsupportedOperationException(
          "ShaleCluster runs Shale's nodes in the test's JVM, and they need Java "
              + NODE_JAVA
              + " or newer; this test runs on Java "
              + running
              + ". Run the tests on a JDK "
              + NODE_JAVA
              + " (e.g. Maven Surefire's <jvm> or toolchains), or start a cluster outside the"
              + " tests (ops/bin/shale-local up) and connect the SDK, which runs on 17, to it.");
    }
    return new Builder();
  }

  /** The cluster's shape; every setting has a default. */
  public static final class Builder {
    private int size = 3;
    private EngineOptions engineOptions = EngineOptions.defaults();
    private NodeConfig.RaftSettings raftSettings = NodeConfig.RaftSettings.defaults();
    private Consumer<ShaleClient.Builder> clientSettings = b -> {};

    private Builder() {}

    /** Nodes in the cluster (default 3; 1 for a single node). */
    public Builder nodes(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("a cluster needs at least 1 node, got " + n);
      }
      this.size = n;
      return this;
    }

    /** Every node's engine settings (default: the engine's defaults). */
    public Builder engineOptions(EngineOptions o) {
      this.engineOptions = o;
      return this;
    }

    /** Every node's Raft settings (default: the node's defaults). */
    public Builder raftSettings(NodeConfig.RaftSettings r) {
      this.raftSettings = r;
      return this;
    }

    /** Settings applied to {@link #client()} and every {@link #newClient} beyond endpoints. */
    public Builder clientSettings(Consumer<ShaleClient.Builder> s) {
      this.clientSettings = s;
      return this;
    }

    public ShaleCluster build() {
      return new ShaleCluster(this);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (cluster == null) { // registered on an instance field: one cluster per test
      perTest = true;
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (perTest) {
      shutdown();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    shutdown();
  }

  private void start() throws IOException, InterruptedException {
    dir = Files.createTempDirectory("shale-cluster-");
    cluster = new LocalCluster(dir, size, engineOptions, raftSettings);
    cluster.leader();
  }

  private void shutdown() throws IOException {
    if (cluster == null) {
      return;
    }
    clients.forEach(ShaleClient::close);
    clients.clear();
    client = null;
    try {
      cluster.close();
    } finally {
      cluster = null;
      deleteTree(dir);
    }
  }

  // ------------------------------------------------------------------------------------------
  // What tests use

  /** A client of every node, shared by the test (closed by the extension). */
  public ShaleClient client() {
    if (client == null) {
      client = newClient(b -> {});
    }
    return client;
  }

  /**
   * A new client of every node with the cluster's client settings, then {@code settings}
   * (deadlines, policies, a meter registry); closed by the extension.
   */
  public ShaleClient newClient(Consumer<ShaleClient.Builder> settings) {
    running();
    ShaleClient.Builder b = ShaleClient.builder().endpoints(endpoints().toArray(String[]::new));
    clientSettings.accept(b);
    settings.accept(b);
    ShaleClient c = b.build();
    clients.add(c);
    return c;
  }

  /** Every node's API address, HOST:PORT. */
  public List<String> endpoints() {
    return running().apiEndpoints();
  }

  /** The ids of the running nodes (n1, n2, ...). */
  public List<String> runningNodes() {
    return running().running();
  }

  /** The id of the leader, waiting up to 20 s for one to be elected. */
  public String leader() throws InterruptedException {
    return running().leader();
  }

  /** Stops node {@code id} (its data stays): a crash as far as the others can tell. */
  public void stop(String id) throws IOException {
    running().stop(id);
  }

  /** Starts node {@code id} again on its data. */
  public void start(String id) throws IOException {
    running().start(id);
  }

  /** A running node, for what the API does not reach (its engine, its Raft division). */
  public ShaleNode node(String id) {
    return running().node(id);
  }

  /** The underlying cluster, for membership tests that add nodes. */
  public LocalCluster local() {
    return running();
  }

  private LocalCluster running() {
    if (cluster == null) {
      throw new IllegalStateException(
          "the cluster is not running: register ShaleCluster with "
              + "@RegisterExtension and use it from a test or a @BeforeEach/@BeforeAll method");
    }
    return cluster;
  }

  @Override
  public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
    return p.getParameter().getType() == ShaleClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext p, ExtensionContext e) {
    return client();
  }

  private static void deleteTree(Path root) throws IOException {
    if (root == null || !Files.exists(root)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            if (e != null) {
              throw e;
            }
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  @Override
  public String toString() {
    return "ShaleCluster["
        + size
        + " nodes"
        + (cluster == null ? ", stopped" : " at " + endpoints())
        + "]";
  }
}
