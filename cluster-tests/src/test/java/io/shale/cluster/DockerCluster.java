package io.shale.cluster;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.shale.client.Entry;
import io.shale.client.ReadConsistency;
import io.shale.client.RetryPolicy;
import io.shale.client.ShaleClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
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
 * A Shale cluster of N containers of the node image on one Docker network, for fault tests:
 * every node's API and HTTP ports are published on fixed host ports (chosen free at start), so
 * they stay the same when a container is stopped and started again or reconnected.
 *
 * <p>Nothing is pulled: the node image is built here from ops/docker/Dockerfile on a base image
 * already present (SHALE_BASE_IMAGE, else shale/jre17:local, else eclipse-temurin:17-jre), and
 * every test skips, with the reason, when no Docker engine answers or no base image is there.
 */
final class DockerCluster implements AutoCloseable {
  static final String IMAGE = "shale/node:it";

  final Network network = Network.newNetwork();
  final Map<String, GenericContainer<?>> nodes = new LinkedHashMap<>();
  final Map<String, Integer> apiPorts = new LinkedHashMap<>();

  /**
   * Skips the calling test unless Docker answers and a base image is present; fails instead
   * where SHALE_REQUIRE_DOCKER=1 (CI, which installs both, sets it).
   */
  static String requireDockerAndBaseImage() {
    boolean docker;
    try {
      docker = DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      docker = false;
    }
    require(docker, "no Docker engine answers here (start dockerd, or run .ci/run, which "
        + "installs and starts one): container tests skipped");
    String wanted = System.getenv("SHALE_BASE_IMAGE");
    for (String candidate : wanted != null ? List.of(wanted)
        : List.of("shale/jre17:local", "eclipse-temurin:17-jre")) {
      if (imageExists(candidate)) {
        return candidate;
      }
    }
    require(false, "no base image for the node image is present and nothing can be pulled: "
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
    Process p = new ProcessBuilder("docker", "build", "-q", "--build-arg",
        "BASE_IMAGE=" + baseImage, "-f", "ops/docker/Dockerfile", "-t", IMAGE, ".")
        .directory(root().toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("docker build of " + IMAGE + " failed:\n" + out);
    }
  }

  DockerCluster(int size) throws IOException {
    List<String> ids = new ArrayList<>();
    for (int i = 1; i <= size; i++) {
      ids.add("n" + i);
    }
    for (String id : ids) {
      int api = freePort();
      int http = freePort();
      apiPorts.put(id, api);
      GenericContainer<?> c = new GenericContainer<>(IMAGE)
          .withImagePullPolicy(name -> false)
          .withNetwork(network).withNetworkAliases(id)
          .withCreateContainerCmdModifier(cmd -> {
            cmd.withHostName(id);
            cmd.getHostConfig().withPortBindings(
                new PortBinding(Ports.Binding.bindPort(api), ExposedPort.tcp(7200)),
                new PortBinding(Ports.Binding.bindPort(http), ExposedPort.tcp(7300)));
          })
          .withCopyToContainer(Transferable.of(config(size)), "/etc/shale/node.toml")
          .withEnv("JAVA_OPTS", "-Xmx256m -Djava.security.properties=/etc/shale/java.security"
              + " -Dorg.slf4j.simpleLogger.log.org.apache.ratis=warn")
          .withCommand("--set", "node.id=" + id, "--set", "raft.election_timeout=1s")
          .waitingFor(Wait.forLogMessage("ready " + id + " .*\\n", 1)
              .withStartupTimeout(Duration.ofSeconds(90)));
      nodes.put(id, c);
    }
    // Start them together: each waits for its own "ready" line, not for the others.
    nodes.values().parallelStream().forEach(GenericContainer::start);
  }

  /** The image's node.toml for {@code size} peers n1..nN (the image itself names three). */
  static String config(int size) {
    StringBuilder t = new StringBuilder("""
        [node]
        id = "n1"
        cluster = "shale"
        data_dir = "/var/lib/shale/data"
        raft_address = "0.0.0.0:7100"
        api_address = "0.0.0.0:7200"
        http_address = "0.0.0.0:7300"
        """);
    for (int i = 1; i <= size; i++) {
      t.append("\n[[peers]]\nid = \"n").append(i).append("\"\nraft_address = \"n").append(i)
          .append(":7100\"\napi_address = \"n").append(i).append(":7200\"\n");
    }
    return t.toString();
  }

  private static int freePort() throws IOException {
    return io.shale.node.local.LocalCluster.freePort(); // below the ephemeral range
  }


  String endpoint(String id) {
    return "localhost:" + apiPorts.get(id);
  }

  List<String> endpoints() {
    return nodes.keySet().stream().map(this::endpoint).toList();
  }

  /** A client of every node, patient enough to ride out the faults. */
  ShaleClient client() {
    return ShaleClient.builder().endpoints(endpoints().toArray(String[]::new))
        .deadline(Duration.ofSeconds(30))
        .retryPolicy(new RetryPolicy(60, Duration.ofMillis(50), Duration.ofMillis(500),
            Duration.ofSeconds(3)))
        .build();
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
    throw new AssertionError("no leader within " + timeout, last);
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

  /** SIGSTOP for every process of the container (the cgroup freezer): a node that hangs. */
  void pause(String id) {
    docker().pauseContainerCmd(containerId(id)).exec();
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
    docker().disconnectFromNetworkCmd().withNetworkId(network.getId())
        .withContainerId(containerId(id)).withForce(true).exec();
  }

  /** Reconnects with the alias, or the peers could not resolve the node's name again. */
  void reconnect(String id) {
    docker().connectToNetworkCmd().withNetworkId(network.getId())
        .withContainerId(containerId(id))
        .withContainerNetwork(new ContainerNetwork().withAliases(id)).exec();
  }

  /**
   * A SHA-256 of every key and value as node {@code id} alone holds them (stale reads of that
   * node only), or null if it cannot answer now.
   */
  String contentHash(String id) {
    try (ShaleClient one = ShaleClient.builder().endpoints(endpoint(id))
        .readConsistency(ReadConsistency.STALE).deadline(Duration.ofSeconds(10)).build()) {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      long n = 0;
      for (Entry e : one.scan(new byte[] {1}, null).pageSize(500)) {
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
    throw new AssertionError("nodes did not converge within " + timeout + ": " + hashes);
  }

  @Override
  public void close() {
    nodes.values().forEach(GenericContainer::stop);
    network.close();
  }
}
