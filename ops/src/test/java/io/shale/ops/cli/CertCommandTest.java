package io.shale.ops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.transport.PeerTls;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code shalectl cert}: the files it writes are what a node's [tls] accepts; reruns keep them. */
class CertCommandTest {
  @TempDir Path dir;

  private String run(String... args) {
    CommandLine cl = Shalectl.commandLine();
    StringWriter out = new StringWriter();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(new StringWriter()));
    assertThat(cl.execute(args)).isZero();
    return out.toString();
  }

  private PeerTls load(String node) {
    return PeerTls.load(
        new PeerTls.Files(
            dir.resolve("ca.pem"),
            dir.resolve(node + ".pem"),
            dir.resolve(node + "-key.pem"),
            PeerTls.DEFAULT_PEER_NAME),
        Instant.now());
  }

  @Test
  void makesACaOnceAndANodeCertificatePerNode() throws Exception {
    String first = run("cert", "--dir", dir.toString(), "--node", "n1,n2", "--host", "10.0.0.7");
    assertThat(first).contains("(new; its key " + dir.resolve("ca-key.pem") + ")");
    assertThat(first).contains("node     " + dir.resolve("n2.pem") + " for 10.0.0.7");
    PeerTls n1 = load("n1");
    assertThat(n1.peerName()).isEqualTo("shale-node");
    load("n2");
    byte[] ca = Files.readAllBytes(dir.resolve("ca.pem"));
    byte[] n1Cert = Files.readAllBytes(dir.resolve("n1.pem"));

    // A rerun keeps the CA and existing nodes and issues the new one from the same CA.
    String second = run("cert", "--dir", dir.toString(), "--node", "n1", "--node", "n3");
    assertThat(second).contains("(kept)").contains(dir.resolve("n3.pem") + " for 127.0.0.1");
    assertThat(Files.readAllBytes(dir.resolve("ca.pem"))).isEqualTo(ca);
    assertThat(Files.readAllBytes(dir.resolve("n1.pem"))).isEqualTo(n1Cert);
    load("n3");

    run("cert", "--dir", dir.toString(), "--node", "n1", "--force");
    assertThat(Files.readAllBytes(dir.resolve("n1.pem"))).isNotEqualTo(n1Cert);
    load("n1");
    assertThat(
            PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca-key.pem"))))
        .isEqualTo("rw-------");
    assertThat(List.of(Files.readString(dir.resolve("n1.pem")).split("\n")).get(0))
        .isEqualTo("-----BEGIN CERTIFICATE-----");
  }

  @Test
  void issuesClientCertificatesNamingTheUserFromTheSameCa() throws Exception {
    run("cert", "--dir", dir.toString(), "--node", "n1");
    String out = run("cert", "--dir", dir.toString(), "--client", "alice,root");
    assertThat(out).contains("client   " + dir.resolve("client.alice.pem") + " for user alice");
    X509Certificate ca = certificate(dir.resolve("ca.pem"));
    X509Certificate alice = certificate(dir.resolve("client.alice.pem"));
    assertThat(alice.getSubjectX500Principal().getName()).isEqualTo("CN=alice");
    alice.verify(ca.getPublicKey());
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("client.alice-key.pem"))))
        .isEqualTo("rw-------");
    assertThat(run("cert", "--dir", dir.toString(), "--client", "alice")).contains("(kept)");
  }

  private static X509Certificate certificate(Path file) throws Exception {
    try (var in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }
}
