package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.transport.ClusterCertificates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The client SDK keeps working for users on Java 17 while the server runs on 25: a program that
 * uses it is compiled and run by a Java 17 runtime (its source launcher), with only the SDK's jar
 * and its own dependencies on the classpath, against three node processes on this build's Java 25.
 * The Java 17 JDK is $SHALE_JAVA17_HOME (.ci/run sets it) or the first under /usr/lib/jvm.
 */
class SdkOnJava17IT {
  private static Path java17() throws IOException {
    String home = System.getenv("SHALE_JAVA17_HOME");
    if (home != null && !home.isBlank()) {
      return Path.of(home, "bin", "java");
    }
    try (Stream<Path> jvms = Files.list(Path.of("/usr/lib/jvm"))) {
      return jvms.filter(d -> d.getFileName().toString().contains("17"))
          .map(d -> d.resolve("bin/java"))
          .filter(Files::isExecutable)
          .findFirst()
          .orElseThrow(
              () ->
                  new IllegalStateException(
                      "no Java 17 runtime: set SHALE_JAVA17_HOME or install openjdk-17-jdk-headless"));
    }
  }

  /** The SDK's jar and its runtime dependencies, as client-sdk's package phase leaves them. */
  private static String sdkClasspath() throws IOException {
    Path target =
        Path.of(System.getProperty("basedir", "."))
            .toAbsolutePath()
            .getParent()
            .resolve("client-sdk/target");
    List<String> entries = new ArrayList<>();
    try (Stream<Path> files = Files.list(target)) {
      files
          .filter(
              f -> f.getFileName().toString().matches("client-sdk-.*(?<!-sources|-tests)\\.jar"))
          .forEach(f -> entries.add(f.toString()));
    }
    assertThat(entries).as("client-sdk's jar in " + target + " (mvn package)").hasSize(1);
    entries.add(target.resolve("lib").toString() + "/*");
    return String.join(":", entries);
  }

  @Test
  void aJava17ProgramUsesTheSdkAgainstAJava25Cluster() throws Exception {
    assertThat(Runtime.version().feature()).as("the nodes' runtime").isGreaterThanOrEqualTo(25);
    Path dir = Files.createTempDirectory("sdk-on-17");
    try (ShaleTarget cluster = new ShaleTarget(dir.resolve("cluster"), "512m", 1, true)) {
      Path certs = dir.resolve("cluster").resolve("certs");
      Path source =
          Path.of(System.getProperty("basedir", "."))
              .toAbsolutePath()
              .resolve("src/test/resources/sdk17/Java17Client.java");
      ProcessBuilder pb =
          new ProcessBuilder(
                  java17().toString(),
                  "-cp",
                  sdkClasspath(),
                  source.toString(),
                  String.join(",", cluster.apiAddresses()),
                  certs.resolve("ca.pem").toString(),
                  ClusterCertificates.clientCertificate(certs, "root").toString(),
                  ClusterCertificates.clientKey(certs, "root").toString())
              .redirectErrorStream(true);
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(out).isZero();
      assertThat(out)
          .contains(
              "get j17/a = 1",
              "scan j17/ = 2 keys",
              "cas applied = true",
              "lease keys = 1",
              "deleted j17/b = true",
              "runtime = 17");
    }
  }

  @Test
  void aJava17TestAskingForAnEmbeddedClusterIsToldItNeeds25() throws Exception {
    Path source =
        Path.of(System.getProperty("basedir", "."))
            .toAbsolutePath()
            .resolve("src/test/resources/sdk17/Java17ClusterAttempt.java");
    Process p =
        new ProcessBuilder(
                java17().toString(),
                "-cp",
                System.getProperty("java.class.path"),
                source.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(out)
        .as(out)
        .contains(
            "refused: ShaleCluster runs Shale's nodes in the test's JVM, and they need Java 25")
        .contains("this test runs on Java 17");
  }
}
