package io.shale.ops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.local.LocalCluster;
import io.shale.node.transport.ClusterCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * shalectl against nodes whose API ports speak TLS: {@code --tls-dir}, {@code --plaintext}, users
 * and roles, and calls as a user with a password.
 */
class ShalectlTlsTest {
  @TempDir Path dir;
  private LocalCluster cluster;

  @AfterEach
  void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private record Result(int code, String out, String err) {}

  private Result run(String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--endpoints",
                String.join(
                    ",",
                    cluster.running().stream().map(n -> cluster.peer(n).apiAddress()).toList()),
                "--deadline",
                "5s"));
    all.addAll(List.of(args));
    CommandLine cl = Shalectl.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    return new Result(cl.execute(all.toArray(String[]::new)), out.toString(), err.toString());
  }

  private static String[] concat(String[] first, String... rest) {
    String[] all = java.util.Arrays.copyOf(first, first.length + rest.length);
    System.arraycopy(rest, 0, all, first.length, rest.length);
    return all;
  }

  @Test
  void speaksTlsAdministersUsersAndRolesAndActsAsAUserWithAPassword() throws Exception {
    cluster = LocalCluster.withPeerTls(dir.resolve("cluster"), 3);
    cluster.leader();
    Path certs = Files.createDirectories(dir.resolve("client"));
    cluster.authority().writeCertificate(certs.resolve("ca.pem"));
    Instant now = Instant.now();
    cluster
        .authority()
        .issue("root", List.of(), now.minusSeconds(60), now.plus(Duration.ofHours(1)))
        .write(
            ClusterCertificates.clientCertificate(certs, "root"),
            ClusterCertificates.clientKey(certs, "root"));

    String tls = certs.toString();
    assertThat(run("--tls-dir", tls, "put", "k", "v").code()).isZero();
    assertThat(run("--tls-dir", tls, "get", "k")).isEqualTo(new Result(0, "v\n", ""));
    Result plaintext = run("--plaintext", "get", "k");
    assertThat(plaintext.code()).as(plaintext.err()).isEqualTo(Shalectl.UNAVAILABLE);
    // Users and roles, administered as root, then used by bob with a password (a token).
    assertThat(run("--tls-dir", tls, "role", "add", "app-reader").code()).isZero();
    assertThat(
            run(
                    "--tls-dir",
                    tls,
                    "role",
                    "grant",
                    "app-reader",
                    "--type",
                    "read",
                    "--prefix",
                    "app/")
                .code())
        .isZero();
    Path password = Files.writeString(dir.resolve("bob.password"), "bob-secret\n");
    assertThat(
            run("--tls-dir", tls, "user", "add", "bob", "--new-password-file", password.toString())
                .code())
        .isZero();
    assertThat(run("--tls-dir", tls, "user", "grant-role", "bob", "app-reader").code()).isZero();
    assertThat(run("--tls-dir", tls, "-o", "json", "user", "list").out())
        .contains("{\"name\":\"bob\",\"roles\":[\"app-reader\"],\"has_password\":true}");
    assertThat(run("--tls-dir", tls, "role", "list").out()).contains("read [\"app/\", \"app0\")");
    assertThat(run("--tls-dir", tls, "put", "app/x", "1").code()).isZero();
    String[] asBob = {"--tls-dir", tls, "--user", "bob", "--password-file", password.toString()};
    assertThat(run(concat(asBob, "get", "app/x")).out()).isEqualTo("1\n");
    assertThat(run(concat(asBob, "whoami")).out()).startsWith("bob (by token)");
    Result denied = run(concat(asBob, "put", "app/y", "2"));
    assertThat(denied.code()).isEqualTo(Shalectl.FAILED);
    assertThat(denied.err())
        .contains("PERMISSION_DENIED")
        .contains("bob may not write key \"app/y\"");
    Result notAdmin = run(concat(asBob, "user", "add", "eve"));
    assertThat(notAdmin.code()).isEqualTo(Shalectl.FAILED);
    assertThat(notAdmin.err()).contains("needs ADMIN");

    Result noCa = run("--tls-dir", dir.resolve("nowhere").toString(), "get", "k");
    assertThat(noCa.code()).isEqualTo(Shalectl.USAGE);
    assertThat(noCa.err())
        .contains("no CA certificate " + dir.resolve("nowhere").resolve("ca.pem"));
  }
}
