package io.shale.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.ops.cli.Shalectl;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml itself: `docker-compose up` of its three nodes (the image built by compose
 * from ops/docker/Dockerfile on the local base image), then shalectl against the published ports.
 * Prometheus comes up too, from the image ops/docker/build-prometheus-image.sh builds out of
 * Debian's package (nothing can be pulled here), and every dashboard and alert query is asked of
 * it.
 */
class ComposeIT {
  private static final String PROJECT = "shale-compose-it";
  private static final String ENDPOINTS = "127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203";
  private static List<String> compose;

  /** The CA and the client certificate of user root, copied out of the certs volume. */
  private static Path certs;

  private static String baseImage;

  /** The Prometheus image: SHALE_PROMETHEUS_IMAGE, default shale/prometheus:local (Debian). */
  private static final String prometheusImage =
      System.getenv().getOrDefault("SHALE_PROMETHEUS_IMAGE", "shale/prometheus:local");

  record Result(int code, String out) {}

  static Result run(List<String> command) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .directory(DockerCluster.root().toFile())
            .redirectErrorStream(true);
    pb.environment().put("SHALE_BASE_IMAGE", baseImage);
    pb.environment().put("SHALE_PROMETHEUS_IMAGE", prometheusImage);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError(command + " did not finish within 10 minutes:\n" + out);
    }
    return new Result(p.exitValue(), out);
  }

  static Result compose(String... args) throws Exception {
    List<String> c = new ArrayList<>(compose);
    c.addAll(List.of("-p", PROJECT, "-f", "docker-compose.yml"));
    c.addAll(List.of(args));
    return run(c);
  }

  /** `docker-compose` (v1, Debian's) or `docker compose` (v2), whichever answers. */
  private static List<String> composeCommand() throws Exception {
    for (List<String> c : List.of(List.of("docker-compose"), List.of("docker", "compose"))) {
      List<String> version = new ArrayList<>(c);
      version.add("version");
      try {
        if (run(version).code() == 0) {
          return c;
        }
      } catch (java.io.IOException notInstalled) {
        // try the next
      }
    }
    return null;
  }

  static Result shalectl(String... args) {
    List<String> all =
        new ArrayList<>(List.of("--endpoints", ENDPOINTS, "--tls-dir", certs.toString()));
    all.addAll(List.of(args));
    StringWriter out = new StringWriter();
    var cl = Shalectl.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(out));
    return new Result(cl.execute(all.toArray(String[]::new)), out.toString());
  }

  @BeforeAll
  static void up() throws Exception {
    baseImage = DockerCluster.requireDockerAndBaseImage();
    compose = composeCommand();
    DockerCluster.require(
        compose != null,
        "neither docker-compose nor docker compose is "
            + "installed (apt-get install docker-compose): compose test skipped");
    compose("down", "-v"); // a previous run's leftovers
    Result up = compose("up", "-d", "--build", "n1", "n2", "n3");
    assertThat(up.code()).as(up.out()).isZero();
    // As docker-compose.yml's header tells a user: copy the client's files out of the volume.
    Result certsContainer = compose("ps", "-a", "-q", "certs");
    String id =
        certsContainer
            .out()
            .lines()
            .map(String::strip)
            .filter(l -> l.matches("[0-9a-f]{12,64}"))
            .findFirst()
            .orElse("");
    assertThat(id).as(certsContainer.out()).isNotEmpty();
    certs = Files.createTempDirectory("compose-certs");
    for (String f : List.of("ca.pem", "client.root.pem", "client.root-key.pem")) {
      Result cp =
          run(List.of("docker", "cp", id + ":/etc/shale/certs/" + f, certs.resolve(f).toString()));
      assertThat(cp.code()).as(cp.out()).isZero();
    }
  }

  @AfterAll
  static void down() throws Exception {
    if (compose != null) {
      compose("down", "-v");
    }
  }

  @Test
  void threeNodesFromTheComposeFileServeAndShalectlShowsThem() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    Result status = shalectl("--deadline", "3s", "status");
    while (status.code() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(1000);
      status = shalectl("--deadline", "3s", "status");
    }
    assertThat(status.code()).as(status.out()).isZero();
    List<String> lines = status.out().lines().toList();
    System.out.println("shalectl status against docker-compose.yml's cluster:\n" + status.out());
    assertThat(lines).hasSize(4);
    assertThat(lines.subList(1, 4))
        .extracting(l -> l.split("\\s+")[0])
        .containsExactly("n1", "n2", "n3");
    assertThat(lines.stream().filter(l -> l.contains("LEADER")).count()).isEqualTo(1);
    for (String n : List.of("n1", "n2", "n3")) {
      Result log = compose("logs", "--no-color", n);
      assertThat(log.out()).as("%s's log", n).contains("speaks mutual TLS");
    }
    assertThat(shalectl("put", "compose/k", "v").code()).isZero();
    assertThat(shalectl("get", "compose/k")).isEqualTo(new Result(0, "v\n"));
    // Docker's health check (/ready every 5 s) marks all three healthy soon after.
    long healthyBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Result ps = compose("ps");
    while (ps.out().split("\\(healthy\\)", -1).length - 1 < 3 && System.nanoTime() < healthyBy) {
      Thread.sleep(1000);
      ps = compose("ps");
    }
    assertThat(ps.out().split("\\(healthy\\)", -1).length - 1).as(ps.out()).isEqualTo(3);
  }

  /**
   * Prometheus (SHALE_PROMETHEUS_IMAGE, default the image built from Debian's package) scrapes the
   * three nodes, and every query of the dashboard and of the alert rules returns data on the live
   * cluster after some traffic. Grafana itself cannot run here; its dashboard's queries are what is
   * tested.
   */
  @Test
  void prometheusScrapesTheNodesAndEveryDashboardAndAlertQueryReturnsData() throws Exception {
    DockerCluster.require(
        DockerCluster.imageExists(prometheusImage),
        prometheusImage
            + " is not present: build it with ops/docker/build-prometheus-image.sh (as .ci/run"
            + " does)");
    Result up = compose("up", "-d", "prometheus");
    assertThat(up.code()).as(up.out()).isZero();
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    String targets = "";
    while (System.nanoTime() < deadline) {
      try {
        targets = get(http, "/api/v1/targets");
        if (targets.split("\"health\":\"up\"", -1).length - 1 == 3) {
          break;
        }
      } catch (java.io.IOException notYet) {
        // Prometheus still starting
      }
      Thread.sleep(1000);
    }
    assertThat(targets.split("\"health\":\"up\"", -1).length - 1).as(targets).isEqualTo(3);
    String rules = get(http, "/api/v1/rules");
    assertThat(rules).contains("ShaleNoLeader").contains("ShaleSlowFsync");

    // Traffic for the request histograms and rates: writes, reads and a scan, over a minute's
    // window of 5 s scrapes; then every query until each answers, or a deadline.
    Map<String, String> queries = PromQueries.all(DockerCluster.root());
    assertThat(queries).hasSizeGreaterThan(25);
    Map<String, String> empty = new java.util.TreeMap<>(queries);
    long queryDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    int round = 0;
    while (!empty.isEmpty() && System.nanoTime() < queryDeadline) {
      for (int i = 0; i < 20; i++) {
        assertThat(shalectl("put", "prom/" + round + "/" + i, "v".repeat(100)).code()).isZero();
      }
      assertThat(shalectl("get", "prom/" + round + "/0").code()).isZero();
      assertThat(shalectl("scan", "--prefix", "prom/", "--limit", "10").code()).isZero();
      if (round % 5 == 0) { // a compaction's bytes for the compaction panels
        Result compacted = shalectl("compact", "--node", "n" + (round / 5 % 3 + 1));
        assertThat(compacted.code()).as(compacted.out()).isZero();
      }
      round++;
      empty.entrySet().removeIf(q -> hasData(http, q.getValue()));
      if (!empty.isEmpty()) {
        Thread.sleep(2000);
      }
    }
    System.out.printf(
        "Prometheus (%s): %d of %d dashboard and alert queries returned data after %d rounds of"
            + " traffic%n",
        prometheusImage, queries.size() - empty.size(), queries.size(), round);
    assertThat(empty).as("queries that returned no data on the live cluster").isEmpty();
  }

  private static String get(HttpClient http, String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:9090" + path)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** Whether the instant query {@code expr} answers with at least one series. */
  private static boolean hasData(HttpClient http, String expr) {
    try {
      String body =
          get(
              http,
              "/api/v1/query?query=" + java.net.URLEncoder.encode(expr, StandardCharsets.UTF_8));
      return body.contains("\"status\":\"success\"") && body.contains("\"value\":[");
    } catch (Exception e) {
      return false;
    }
  }
}
