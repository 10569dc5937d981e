package io.shale.cluster;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.RestartPolicy;
import io.shale.client.Entry;
import io.shale.client.Member;
import io.shale.client.ReadConsistency;
import io.shale.client.RetryPolicy;
import io.shale.client.ShaleClient;
import io.shale.client.TlsSettings;
import io.shale.node.transport.CertificateAuthority;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;

/**
 * A Shale cluster of N containers of the node image on one Docker network, for fault tests: every
 * node's API and HTTP ports are published on fixed host ports (chosen free at start), so they stay
 * the same when a container is stopped and started again or reconnected.
 *
 * <p>Nothing is pulled: the node image is built here from ops/docker/Dockerfile on a base image
 * already present (SHALE_BASE_IMAGE, else shale/base:local, else debian:bookworm-slim), and every
 * test skips, with the reason, when no Docker engine answers or no base image is there.
 */
final class DockerCluster implements AutoCloseable {
  static final String IMAGE = "shale/node:it";

  final Network network = Network.newNetwork();

  /** Node id to its container; a member replaced ({@link #replaceWithJoiner}) gets a new one. */
  final Map<String, GenericContainer<?>> nodes = new LinkedHashMap<>();

  final Map<String, Integer> apiPorts = new LinkedHashMap<>();

  /**
   * Skips the calling test unless Docker answers and a base image is present; fails instead where
   * SHALE_REQUIRE_DOCKER=1 (CI, which installs both, sets it).
   */
  static String requireDockerAndBaseImage() {
    boolean docker;
    try {
      docker = DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      docker = false;
    }
    require(
        docker,
        "no Docker engine answers here (start dockerd, or run .ci/run, which "
            + "installs and starts one): container tests skipped");
    String wanted = System.getenv("SHALE_BASE_IMAGE");
    for (String candidate :
        wanted != null ? List.of(wanted) : List.of("shale/base:local", "debian:bookworm-slim")) {
      if (imageExists(candidate)) {
        return candidate;
      }
    }
    require(
        false,
        "no base image for the node image is present and nothing can be pulled: "
            + "build one with ops/docker/build-base-image.sh (or set SHALE_BASE_IMAGE)");
    return null;
  }

  static void require(boolean condition, String reason) {
    if ("1".equals(System.getenv("SHALE_REQUIRE_DOCKER"))) {
      if (!condition) {
        throw new AssertionError(reason + " (SHALE_REQUIRE_DOCKER=1: failing instead)");
      }
      return;
    }
    Assumptions.assumeTrue(condition, reason);
  }

  static boolean imageExists(String image) {
    try {
      DockerClientFactory.instance().client().inspectImageCmd(image).exec();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  static Path root() {
    return Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();
  }

  /** Builds {@link #IMAGE} from the repository (the jars of `mvn package` must be there). */
  static void buildImage(String baseImage) throws Exception {
    Process p =
        new ProcessBuilder(
                "docker",
                "build",
                "-q",
                "--build-arg",
                "BASE_IMAGE=" + baseImage,
                "-f",
                "ops/docker/Dockerfile",
                "-t",
                IMAGE,
                ".")
            .directory(root().toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("docker build of " + IMAGE + " failed:\n" + out);
    }
  }

  private final int size;
  private final String extraConfig;
  private final List<String> extraArgs;

  DockerCluster(int size) throws IOException {
    this(size, "", List.of());
  }

  /**
   * {@code size} nodes; {@code extraConfig} is appended to every node's node.toml (e.g. [lsm]
   * sections, which --set cannot reach) and {@code extraArgs} added to every node's command.
   */
  DockerCluster(int size, String extraConfig, List<String> extraArgs) throws IOException {
    this.size = size;
    this.authority = CertificateAuthority.create("docker-cluster-ca", Duration.ofDays(7));
    this.clientTls = clientTls(authority);
    this.extraConfig = extraConfig;
    this.extraArgs = List.copyOf(extraArgs);
    for (int i = 1; i <= size; i++) {
      String id = "n" + i;
      apiPorts.put(id, freePort());
      httpPorts.put(id, freePort());
      nodes.put(id, container(id, false));
    }
    // Start them together: each waits for its own "ready" line, not for the others.
    nodes.values().parallelStream().forEach(GenericContainer::start);
    for (String id : nodes.keySet()) {
      if (!logs(id).contains("speaks mutual TLS") || !logs(id).contains("the API port")) {
        throw new IllegalStateException(
            id + " did not start with TLS on its Raft and API ports:\n" + logs(id));
      }
    }
  }

  final Map<String, Integer> httpPorts = new LinkedHashMap<>();

  /** The CA of this cluster's Raft ports: every node gets a certificate for its container name. */
  private final CertificateAuthority authority;

  /** What the tests' clients present: the cluster's CA and a client certificate of user root. */
  private final TlsSettings clientTls;

  private static TlsSettings clientTls(CertificateAuthority authority) throws IOException {
    Path dir = Files.createTempDirectory("docker-cluster-client");
    dir.toFile().deleteOnExit();
    Path ca = dir.resolve("ca.pem");
    authority.writeCertificate(ca);
    Instant now = Instant.now();
    authority
        .issue("root", List.of(), now.minusSeconds(300), now.plus(Duration.ofDays(7)))
        .write(dir.resolve("root.pem"), dir.resolve("root-key.pem"));
    return TlsSettings.mutual(ca, dir.resolve("root.pem"), dir.resolve("root-key.pem"));
  }

  /** A client builder for this cluster: TLS to the API ports, as user root. */
  ShaleClient.Builder clientBuilder() {
    return ShaleClient.builder().tls(clientTls);
  }

  /** Where a container finds its [tls] files (copied in, readable by the node's user). */
  private static final String CA_FILE = "/etc/shale/tls-ca.pem";

  private static final String CERT_FILE = "/etc/shale/tls-node.pem";
  private static final String KEY_FILE = "/etc/shale/tls-node-key.pem";

  /** The [tls] section every node's node.toml ends with: mutual TLS on the Raft port. */
  static final String TLS_CONFIG =
      "\n[tls]\nca_file = \""
          + CA_FILE
          + "\"\ncert_file = \""
          + CERT_FILE
          + "\"\nkey_file = \""
          + KEY_FILE
          + "\"\n";

  /**
   * A container for node {@code id} on its fixed host ports; with {@code join}, started outside any
   * configuration (shale-node --join) to be added as a member.
   */
  private GenericContainer<?> container(String id, boolean join) {
    int api = apiPorts.get(id);
    int http = httpPorts.get(id);
    List<String> command =
        new ArrayList<>(List.of("--set", "node.id=" + id, "--set", "raft.election_timeout=1s"));
    command.addAll(extraArgs);
    if (join) {
      command.add("--join");
    }
    CertificateAuthority.Issued tls =
        authority.issueNode(List.of(id, "localhost", "127.0.0.1"), Duration.ofDays(7));
    return new GenericContainer<>(IMAGE)
        .withImagePullPolicy(name -> false)
        .withNetwork(network)
        .withNetworkAliases(id)
        .withCreateContainerCmdModifier(
            cmd -> {
              cmd.withHostName(id);
              cmd.getHostConfig()
                  .withPortBindings(
                      new PortBinding(Ports.Binding.bindPort(api), ExposedPort.tcp(7200)),
                      new PortBinding(Ports.Binding.bindPort(http), ExposedPort.tcp(7300)))
                  // For iptables in the node's network namespace (partitions); the node itself
                  // runs as the unprivileged user shale, the rules are set through docker exec.
                  .withCapAdd(Capability.NET_ADMIN)
                  // A supervisor, as in docker-compose.yml: a node exits (status 3) when Ratis
                  // closes its Raft division, to be restarted on its data. docker kill and stop
                  // are manual stops, which a restart policy leaves alone.
                  .withRestartPolicy(RestartPolicy.onFailureRestart(3));
            })
        .withCopyToContainer(
            Transferable.of(config(size) + TLS_CONFIG + extraConfig), "/etc/shale/node.toml")
        .withCopyToContainer(Transferable.of(authority.certificatePem(), 0444), CA_FILE)
        .withCopyToContainer(Transferable.of(tls.certificatePem(), 0444), CERT_FILE)
        // Readable by all inside the container: the copy belongs to root, the node runs as shale.
        .withCopyToContainer(Transferable.of(tls.keyPem(), 0444), KEY_FILE)
        .withEnv(
            "JAVA_OPTS",
            "-Xmx512m -XX:+ExitOnOutOfMemoryError -XX:G1HeapRegionSize=4m"
                + " -Djava.security.properties=/etc/shale/java.security"
                + " -Dorg.slf4j.simpleLogger.log.org.apache.ratis=warn"
                // Ratis's server (RaftServerImpl and the snapshot installation handler log under
                // this name): elections, inconsistent appends and installs, for a failed run's
                // logs.
                + " -Dorg.slf4j.simpleLogger.log.org.apache.ratis.server=info"
                + " -Dorg.slf4j.simpleLogger.log.org.apache.ratis.server.RaftServerConfigKeys=warn"
                + " -Dorg.slf4j.simpleLogger.showDateTime=true")
        .withCommand(command.toArray(String[]::new))
        .waitingFor(
            Wait.forLogMessage("live " + id + " .*\\n", 1)
                .withStartupTimeout(Duration.ofSeconds(90)));
  }

  /**
   * Replaces node {@code id}'s container by a new one with an empty data volume, started to join
   * (same name, same host ports): what an operator does to replace a member that was removed. The
   * old container and its volume are gone.
   */
  void replaceWithJoiner(String id) {
    nodes.get(id).stop();
    GenericContainer<?> fresh = container(id, true);
    fresh.start();
    nodes.put(id, fresh);
  }

  /** Everything the node's process wrote to stdout and stderr so far. */
  String logs(String id) {
    return nodes.get(id).getLogs();
  }

  /**
   * Saves every node's log as {@code out/<prefix><id>.log} and, with {@code withData}, its data
   * directory as {@code out/<prefix><id>-data}, for a failure to be studied after the containers
   * are gone. Copies that fail are reported on stderr, not thrown: the failure being saved is the
   * one that matters.
   */
  void saveForStudy(Path out, String prefix, boolean withData) throws IOException {
    Files.createDirectories(out);
    for (String id : nodes.keySet()) {
      Files.writeString(out.resolve(prefix + id + ".log"), logs(id));
      if (withData) {
        String failed = copyData(id, out.resolve(prefix + id + "-data"));
        if (!failed.isEmpty()) {
          System.err.println("could not copy " + id + "'s data directory: " + failed);
        }
      }
    }
  }

  /**
   * Copies node {@code id}'s data directory (engine, Raft log, checkpoints) to {@code dest}, so a
   * failed run's files can be studied (e.g. with io.shale.engine.Verifier) after the containers are
   * gone. Best effort: returns what {@code docker cp} printed if it failed.
   */
  String copyData(String id, Path dest) {
    try {
      Process p =
          new ProcessBuilder(
                  "docker",
                  "cp",
                  nodes.get(id).getContainerId() + ":/var/lib/shale",
                  dest.toString())
              .redirectErrorStream(true)
              .start();
      String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return p.waitFor() == 0 ? "" : printed;
    } catch (IOException e) {
      return e.toString();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e.toString();
    }
  }

  /** The image's node.toml for {@code size} peers n1..nN (the image itself names three). */
  static String config(int size) {
    StringBuilder t =
        new StringBuilder(
            """
        [node]
        id = "n1"
        cluster = "shale"
        data_dir = "/var/lib/shale/data"
        raft_address = "0.0.0.0:7100"
        api_address = "0.0.0.0:7200"
        http_address = "0.0.0.0:7300"
        """);
    for (int i = 1; i <= size; i++) {
      t.append("\n[[peers]]\nid = \"n")
          .append(i)
          .append("\"\nraft_address = \"n")
          .append(i)
          .append(":7100\"\napi_address = \"n")
          .append(i)
          .append(":7200\"\n");
    }
    return t.toString();
  }

  /**
   * A host port free now (below the ephemeral range) and not given to another container yet: Docker
   * holds a container's port only once it starts, so a port merely free at the check could go to
   * two containers of one cluster ({@link io.shale.node.local.LocalCluster#freePort} never hands
   * one out twice).
   */
  private static int freePort() throws IOException {
    return io.shale.node.local.LocalCluster.freePort();
  }

  String endpoint(String id) {
    return "localhost:" + apiPorts.get(id);
  }

  List<String> endpoints() {
    return nodes.keySet().stream().map(this::endpoint).toList();
  }

  /** A client of every node, patient enough to ride out the faults. */
  ShaleClient client() {
    return clientBuilder()
        .endpoints(endpoints().toArray(String[]::new))
        .deadline(Duration.ofSeconds(30))
        .retryPolicy(
            new RetryPolicy(
                60, Duration.ofMillis(50), Duration.ofMillis(500), Duration.ofSeconds(3)))
        .build();
  }

  /**
   * Waits until the process of every running node answers {@code /health} (it serves its ports; it
   * may not have caught up yet) and returns how long that took; fails naming the nodes still silent
   * after {@code timeout}. A container left stopped is not waited for.
   */
  long awaitServing(Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    java.net.http.HttpClient http =
        java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    List<String> silent = new ArrayList<>(nodes.keySet());
    while (true) {
      silent.removeIf(id -> !running(id) || healthy(http, id));
      if (silent.isEmpty()) {
        return (System.nanoTime() - start) / 1_000_000;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "nodes " + silent + " did not answer /health within " + timeout + "; " + statuses());
      }
      Thread.sleep(200);
    }
  }

  private boolean healthy(java.net.http.HttpClient http, String id) {
    try {
      var request =
          java.net.http.HttpRequest.newBuilder(
                  java.net.URI.create("http://localhost:" + httpPorts.get(id) + "/health"))
              .timeout(Duration.ofSeconds(2))
              .build();
      return http.send(request, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The leader's id, asked of any node that answers, within {@code timeout}; fails if none. */
  String awaitLeader(ShaleClient client, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        String leader = client.cluster().members().leaderId();
        if (!leader.isEmpty()) {
          // A leader is only useful once it commits: one write through it proves it.
          client.put("probe/leader", leader);
          return client.cluster().members().leaderId();
        }
      } catch (RuntimeException e) {
        last = e;
      }
      Thread.sleep(200);
    }
    // One line, so that a build's summary of failures shows it: what the client last heard
    // and what each node says of itself (a stuck client and a cluster without a leader differ).
    throw new AssertionError(
        "no leader within "
            + timeout
            + "; last failure: "
            + (last == null ? "none" : String.valueOf(last).replace('\n', ' '))
            + "; nodes: "
            + statuses().replace('\n', ';')
            + "\n"
            + nodes.keySet().stream()
                .map(id -> id + "'s last replication lines:\n" + replicationLines(id, 8))
                .collect(java.util.stream.Collectors.joining()),
        last);
  }

  /**
   * Waits until every node holds what the leader committed so far (call it after {@link
   * #awaitLeader}, which commits a write), so faults start on a formed cluster. Until a follower
   * has received its first entry, Ratis does not count its vote (a candidate that has commits
   * ignores voters with an empty log, which could be members that lost their disk): a new cluster
   * whose leader dies in that window waits for that leader to come back. CI hit it: a 3-node
   * cluster, the leader killed 1.5 s after its election, before its appender had reached the third
   * node, which started last.
   */
  void awaitFormed() throws InterruptedException {
    awaitConvergence(Duration.ofSeconds(60));
  }

  /** What every node says of itself, a line each (see {@link #selfStatus}). */
  String statuses() {
    StringBuilder out = new StringBuilder();
    for (String id : nodes.keySet()) {
      try (ShaleClient one = alone(id)) {
        out.append(selfStatus(id, one)).append('\n');
      } catch (RuntimeException e) {
        out.append(id).append(": cannot answer: ").append(e.getMessage()).append('\n');
      }
    }
    return out.toString();
  }

  /** Node {@code id}'s role, term, leader, commit, applied and snapshot index, and members. */
  private static String selfStatus(String id, ShaleClient one) {
    var self =
        one.cluster().status().stream()
            .filter(n -> n.getMember().getId().equals(id))
            .findFirst()
            .orElse(null);
    return id
        + ": "
        + (self == null
            ? "no status"
            : self.getRole()
                + " term "
                + self.getTerm()
                + " leader "
                + self.getLeaderId()
                + " commit "
                + self.getCommitIndex()
                + " applied "
                + self.getAppliedIndex()
                + " snapshot "
                + self.getSnapshotIndex()
                + " members "
                + one.cluster().members().members().stream().map(Member::id).toList());
  }

  DockerClient docker() {
    return DockerClientFactory.instance().client();
  }

  String containerId(String id) {
    return nodes.get(id).getContainerId();
  }

  void kill(String id) {
    docker().killContainerCmd(containerId(id)).exec();
  }

  void stop(String id) {
    docker().stopContainerCmd(containerId(id)).withTimeout(20).exec();
  }

  /** Starts a killed or stopped container again: same filesystem, same volume, same ports. */
  void start(String id) {
    docker().startContainerCmd(containerId(id)).exec();
  }

  /**
   * Freezes every process of the container (the cgroup freezer): a node that hangs. Tried up to 5
   * times: the freezer gives up on a process it cannot stop in time (one in the middle of an fsync,
   * say; "OCI runtime pause failed: unable to freeze", 5-node run 803) and leaves the container
   * running, so asking again is safe.
   */
  void pause(String id) throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        docker().pauseContainerCmd(containerId(id)).exec();
        return;
      } catch (com.github.dockerjava.api.exception.InternalServerErrorException e) {
        if (attempt == 5
            || e.getMessage() == null
            || !e.getMessage().contains("unable to freeze")) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  void unpause(String id) {
    docker().unpauseContainerCmd(containerId(id)).exec();
  }

  /** Whether the container runs (not killed or stopped). */
  boolean running(String id) {
    Boolean r = docker().inspectContainerCmd(containerId(id)).exec().getState().getRunning();
    return Boolean.TRUE.equals(r);
  }

  void disconnect(String id) {
    docker()
        .disconnectFromNetworkCmd()
        .withNetworkId(network.getId())
        .withContainerId(containerId(id))
        .withForce(true)
        .exec();
  }

  /** Reconnects with the alias, or the peers could not resolve the node's name again. */
  void reconnect(String id) {
    docker()
        .connectToNetworkCmd()
        .withNetworkId(network.getId())
        .withContainerId(containerId(id))
        .withContainerNetwork(new ContainerNetwork().withAliases(id))
        .exec();
  }

  /** The node's address on the cluster's network now (a restarted node may get another). */
  String ip(String id) {
    var networks =
        docker().inspectContainerCmd(containerId(id)).exec().getNetworkSettings().getNetworks();
    for (ContainerNetwork n : networks.values()) {
      if (network.getId().equals(n.getNetworkID())) {
        return n.getIpAddress();
      }
    }
    throw new IllegalStateException(id + " is not on the cluster's network");
  }

  /** Runs {@code command} as root in node {@code id}'s container; fails on a non-zero exit. */
  String execAsRoot(String id, String... command) {
    try {
      var r =
          nodes
              .get(id)
              .execInContainer(
                  org.testcontainers.containers.ExecConfig.builder()
                      .user("root")
                      .command(command)
                      .build());
      if (r.getExitCode() != 0) {
        throw new IllegalStateException(
            String.join(" ", command)
                + " in "
                + id
                + " exited "
                + r.getExitCode()
                + ": "
                + r.getStderr()
                + r.getStdout());
      }
      return r.getStdout();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Cuts the network between every node of {@code a} and every node of {@code b}, in both
   * directions (iptables DROP in each node's own namespace, so the nodes' traffic with the test's
   * clients, which comes through the Docker gateway, is untouched). Packets are dropped, not
   * refused: peers see timeouts, as in a real partition.
   */
  void cut(java.util.Collection<String> a, java.util.Collection<String> b) {
    Map<String, String> ips = new LinkedHashMap<>();
    for (String id : a) {
      ips.put(id, ip(id));
    }
    for (String id : b) {
      ips.put(id, ip(id));
    }
    for (String x : a) {
      for (String y : b) {
        if (x.equals(y)) {
          continue;
        }
        drop(x, ips.get(y));
        drop(y, ips.get(x));
      }
    }
  }

  private void drop(String on, String peerIp) {
    execAsRoot(on, "iptables", "-A", "INPUT", "-s", peerIp, "-j", "DROP");
    execAsRoot(on, "iptables", "-A", "OUTPUT", "-d", peerIp, "-j", "DROP");
  }

  /** Removes every rule {@link #cut} added, on every running node. */
  void healNetwork() {
    RuntimeException first = null;
    for (String id : nodes.keySet()) {
      if (!running(id)) {
        continue;
      }
      try {
        execAsRoot(id, "iptables", "-F");
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /**
   * A SHA-256 of every key and value as node {@code id} alone holds them (stale reads of that node
   * only), or null if it cannot answer now.
   */
  String contentHash(String id) {
    try (ShaleClient one = alone(id)) {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      long n = 0;
      for (Entry e : everything(one)) {
        sha.update(e.key());
        sha.update((byte) 0);
        sha.update(e.value());
        sha.update((byte) 0);
        n++;
      }
      return n + ":" + HexFormat.of().formatHex(sha.digest());
    } catch (Exception e) {
      return null;
    }
  }

  /** A client of node {@code id} alone, reading what that node has applied (STALE). */
  private ShaleClient alone(String id) {
    return clientBuilder()
        .endpoints(endpoint(id))
        .readConsistency(ReadConsistency.STALE)
        .deadline(Duration.ofSeconds(10))
        .build();
  }

  /** Every key (they all start above byte 0) in pages of 500. */
  private static Iterable<Entry> everything(ShaleClient one) {
    return one.scan(new byte[] {1}, null).pageSize(500);
  }

  /** Waits until every node's content hash is the same; returns it, or fails naming them. */
  String awaitConvergence(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<String, String> hashes = new LinkedHashMap<>();
    while (System.nanoTime() < deadline) {
      hashes.clear();
      for (String id : nodes.keySet()) {
        hashes.put(id, contentHash(id));
      }
      if (!hashes.containsValue(null) && hashes.values().stream().distinct().count() == 1) {
        return hashes.values().iterator().next();
      }
      Thread.sleep(500);
    }
    throw new AssertionError(
        "nodes did not converge within " + timeout + ": " + hashes + "\n" + describe());
  }

  /**
   * What each node says of itself (role, term, commit and applied index, snapshot index) and every
   * key whose value or mod index is not the same on all nodes: tells a replica that lags (lower
   * applied index) from one that diverged (same index, other data).
   */
  String describe() {
    StringBuilder out = new StringBuilder();
    Map<String, Map<String, String>> byKey = new java.util.TreeMap<>();
    for (String id : nodes.keySet()) {
      try (ShaleClient one = alone(id)) {
        out.append(selfStatus(id, one)).append('\n');
        for (Entry e : everything(one)) {
          String v = e.value().length > 40 ? e.value().length + " bytes" : e.valueUtf8();
          byKey
              .computeIfAbsent(e.keyUtf8(), k -> new java.util.TreeMap<>())
              .put(id, v + " @" + e.modIndex());
        }
      } catch (RuntimeException e) {
        out.append(id).append(": cannot answer: ").append(e.getMessage()).append('\n');
      }
    }
    byKey.forEach(
        (key, values) -> {
          if (values.size() != nodes.size() || values.values().stream().distinct().count() > 1) {
            out.append("  ").append(key).append(": ").append(values).append('\n');
          }
        });
    // Last, so that the tail of a build's output (all a failure report may keep) holds them.
    for (String id : nodes.keySet()) {
      out.append(id).append("'s last replication lines:\n").append(replicationLines(id, 12));
    }
    return out.toString();
  }

  /**
   * The last {@code max} lines of node {@code id}'s log about log replication and snapshot installs
   * (refused appends, install notifications, fetches, elections): what a lagging replica's state
   * alone does not tell. Ratis's repeated configuration lines are left out.
   */
  String replicationLines(String id, int max) {
    java.util.Deque<String> last = new java.util.ArrayDeque<>();
    try {
      for (String line : logs(id).split("\n")) {
        boolean relevant =
            line.contains("nstall")
                || line.contains("INCONSISTENCY")
                || line.contains("appendEntries")
                || line.contains("changeToLeader")
                || line.contains("changeToFollower")
                || line.contains("purge")
                || line.contains("snapshot");
        if (relevant && !line.contains("set new configuration")) {
          last.addLast("    " + (line.length() > 300 ? line.substring(0, 300) + "..." : line));
          if (last.size() > max) {
            last.removeFirst();
          }
        }
      }
    } catch (RuntimeException e) {
      return "    (log unavailable: " + e.getMessage() + ")\n";
    }
    return last.isEmpty() ? "    (none)\n" : String.join("\n", last) + "\n";
  }

  @Override
  public void close() {
    nodes.values().forEach(GenericContainer::stop);
    network.close();
  }
}
