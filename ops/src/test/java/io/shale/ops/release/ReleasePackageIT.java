package io.shale.ops.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release package as a user gets it: {@code mvn package}'s {@code shale-<version>.tar.gz}
 * unpacked into an empty directory, away from the source tree, with no Maven on the scripts' PATH:
 * {@code --version} names the version and commit, {@code bin/shale-local up} starts a 3-node
 * cluster from it, {@code bin/shalectl} writes and reads through it, {@code down --wipe} stops it.
 */
class ReleasePackageIT {
  @TempDir Path dir;

  record Result(int exit, String output) {}

  /** Runs {@code command} in {@code cwd} with neither JAVA_HOME nor this build's JDK on PATH. */
  private static Result run(Path cwd, long seconds, String... command) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("PATH", "/usr/bin:/bin");
    env.remove("JAVA_HOME");
    env.put(
        "JAVA_OPTS", "-Xmx512m"); // the shipped heap: a node refuses a heap its budgets do not fit
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not end within " + seconds + " s");
    }
    return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  private static Path tarball() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("target"))) {
      List<Path> found =
          s.filter(p -> p.getFileName().toString().matches("shale-.+\\.tar\\.gz")).toList();
      assertThat(found).as("mvn package wrote target/shale-<version>.tar.gz").hasSize(1);
      return found.get(0).toAbsolutePath();
    }
  }

  @Test
  void theUnpackedPackageStartsAClusterThatServes() throws Exception {
    Path unpacked = dir.resolve("install");
    Files.createDirectories(unpacked);
    Result untar = run(unpacked, 60, "tar", "xzf", tarball().toString());
    assertThat(untar.exit()).as(untar.output()).isZero();
    Path home;
    try (Stream<Path> s = Files.list(unpacked)) {
      home = s.findFirst().orElseThrow();
    }
    assertThat(home.getFileName().toString()).startsWith("shale-");
    for (String f :
        List.of(
            "bin/shale-node",
            "bin/shalectl",
            "bin/shale-local",
            "bin/lib/ops-main.sh",
            "conf/node.toml",
            "conf/shale.toml",
            "README.md",
            "RELEASE",
            "runtime/bin/java",
            "lib/shale.aot",
            "lib/shale.aot.sha256")) {
      assertThat(home.resolve(f)).as(f).exists();
    }
    // The ahead-of-time cache still matches the unpacked runtime and jars.
    assertThat(new ReleaseLayout(home).aotCacheUsable()).isTrue();
    assertThat(Files.isExecutable(home.resolve("bin/shalectl"))).isTrue();
    assertThat(Files.isExecutable(home.resolve("runtime/bin/java"))).isTrue();
    Result runtime = run(home, 60, home.resolve("runtime/bin/java").toString(), "-version");
    assertThat(runtime.output()).contains("version \"25");
    try (Stream<Path> jars = Files.list(home.resolve("lib"))) {
      assertThat(jars.map(p -> p.getFileName().toString()).toList())
          .anyMatch(n -> n.startsWith("ops-"))
          .anyMatch(n -> n.startsWith("raft-node-"))
          .anyMatch(n -> n.startsWith("storage-engine-"));
    }
    String release = Files.readString(home.resolve("RELEASE"));
    String version = release.replaceAll("(?s).*version=([^\\n]+).*", "$1");
    Result ctlVersion = run(home, 60, "bin/shalectl", "--version");
    assertThat(ctlVersion.output()).startsWith("shalectl " + version + " (commit ");
    Result nodeVersion = run(home, 60, "bin/shale-node", "--version");
    assertThat(nodeVersion.output()).startsWith("shale-node " + version + " (commit ");
    Result localVersion = run(home, 60, "bin/shale-local", "--version");
    assertThat(localVersion.output()).startsWith("shale-local " + version + " (commit ");

    Path data = dir.resolve("data");
    Result up = run(home, 240, "bin/shale-local", "up", "--dir", data.toString(), "--no-demo");
    try {
      assertThat(up.exit()).as(up.output()).isZero();
      assertThat(up.output()).contains("up to date").contains("n1 ready").contains("elected");
      // The nodes run on the package's runtime, not on a java of the machine.
      long pid = Long.parseLong(Files.readString(data.resolve("n1.pid")).trim());
      assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "exe")))
          .isEqualTo(home.resolve("runtime/bin/java").toRealPath());
      // ... with the package's ahead-of-time cache, which the JVM mapped.
      assertThat(Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")))
          .contains("-XX:AOTCache=" + home.resolve("lib/shale.aot"));
      assertThat(Files.readString(Path.of("/proc", Long.toString(pid), "maps")))
          .contains(home.resolve("lib/shale.aot").toRealPath().toString());
      List<String> ctl =
          new ArrayList<>(List.of("bin/shalectl", "--tls-dir", data.resolve("certs").toString()));
      List<String> put = new ArrayList<>(ctl);
      put.addAll(List.of("put", "from-the-package", "works"));
      Result w = run(home, 60, put.toArray(String[]::new));
      assertThat(w.exit()).as(w.output()).isZero();
      List<String> get = new ArrayList<>(ctl);
      get.addAll(List.of("get", "from-the-package"));
      Result r = run(home, 60, get.toArray(String[]::new));
      assertThat(r.output().trim()).isEqualTo("works");
    } finally {
      Result down = run(home, 120, "bin/shale-local", "down", "--dir", data.toString(), "--wipe");
      assertThat(down.exit()).as(down.output()).isZero();
    }
  }
}
