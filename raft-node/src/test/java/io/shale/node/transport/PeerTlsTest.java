package io.shale.node.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a node checks in its {@code [tls]} files before it listens, and whom it then trusts. */
class PeerTlsTest {
  @TempDir Path dir;

  private CertificateAuthority ca;
  private Path caFile;

  @BeforeEach
  void makeCa() {
    ca = CertificateAuthority.create("test-ca", Duration.ofDays(1));
    caFile = dir.resolve("ca.pem");
    ca.writeCertificate(caFile);
  }

  private PeerTls.Files write(String name, CertificateAuthority.Issued issued) {
    Path cert = dir.resolve(name + ".pem");
    Path key = dir.resolve(name + "-key.pem");
    issued.write(cert, key);
    return new PeerTls.Files(caFile, cert, key, PeerTls.DEFAULT_PEER_NAME);
  }

  @Test
  void aNodeCertificateFromTheCaLoads() throws Exception {
    PeerTls.Files files = write("n1", ca.issueNode(List.of("127.0.0.1", "n1"), Duration.ofDays(1)));
    PeerTls tls = PeerTls.load(files, Instant.now());
    assertThat(tls.peerName()).isEqualTo("shale-node");
    assertThat(tls.ratis().isMutualTls()).isTrue();
    assertThat(Files.readString(files.keyFile())).startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(files.keyFile())))
        .isEqualTo("rw-------");
  }

  @Test
  void aMissingFileIsNamedWithItsKey() {
    PeerTls.Files files = write("n1", ca.issueNode(List.of("n1"), Duration.ofDays(1)));
    Path missing = dir.resolve("nowhere.pem");
    assertThatThrownBy(
            () ->
                PeerTls.load(
                    new PeerTls.Files(caFile, files.certFile(), missing, "shale-node"),
                    Instant.now()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tls.key_file: " + missing + " does not exist");
    assertThatThrownBy(
            () ->
                PeerTls.load(
                    new PeerTls.Files(missing, files.certFile(), files.keyFile(), "shale-node"),
                    Instant.now()))
        .hasMessage("tls.ca_file: " + missing + " does not exist");
  }

  @Test
  void anExpiredOrNotYetValidCertificateIsRefused() {
    Instant now = Instant.now();
    PeerTls.Files expired =
        write(
            "old",
            ca.issue(
                "shale-node", List.of("n1"), now.minus(Duration.ofDays(2)), now.minusSeconds(60)));
    assertThatThrownBy(() -> PeerTls.load(expired, now))
        .hasMessageStartingWith("tls.cert_file: " + expired.certFile() + " expired at");
    PeerTls.Files early =
        write(
            "early",
            ca.issue("shale-node", List.of("n1"), now.plusSeconds(3600), now.plusSeconds(7200)));
    assertThatThrownBy(() -> PeerTls.load(early, now))
        .hasMessageStartingWith("tls.cert_file: " + early.certFile() + " is not valid before");
  }

  @Test
  void aKeyThatIsNotTheCertificatesIsRefused() {
    PeerTls.Files a = write("a", ca.issueNode(List.of("n1"), Duration.ofDays(1)));
    PeerTls.Files b = write("b", ca.issueNode(List.of("n2"), Duration.ofDays(1)));
    assertThatThrownBy(
            () ->
                PeerTls.load(
                    new PeerTls.Files(caFile, a.certFile(), b.keyFile(), "shale-node"),
                    Instant.now()))
        .hasMessage(
            "tls.key_file: "
                + b.keyFile()
                + " is not the private key of the certificate in "
                + a.certFile());
  }

  @Test
  void aCertificateFromAnotherCaOrWithAnotherCnIsRefused() {
    CertificateAuthority other = CertificateAuthority.create("other-ca", Duration.ofDays(1));
    PeerTls.Files foreign = write("foreign", other.issueNode(List.of("n1"), Duration.ofDays(1)));
    assertThatThrownBy(() -> PeerTls.load(foreign, Instant.now()))
        .hasMessageStartingWith(
            "tls.cert_file: " + foreign.certFile() + " is not issued by the CA in " + caFile);
    Instant now = Instant.now();
    PeerTls.Files user =
        write("alice", ca.issue("alice", List.of(), now.minusSeconds(60), now.plusSeconds(3600)));
    assertThatThrownBy(() -> PeerTls.load(user, now))
        .hasMessageContaining("has subject CN \"alice\" but peers accept only \"shale-node\"");
  }

  @Test
  void theTrustManagerTakesOnlyNodesOfTheCa() throws Exception {
    PeerTls tls =
        PeerTls.load(write("n1", ca.issueNode(List.of("n1"), Duration.ofDays(1))), Instant.now());
    var trust = tls.trustManager();
    Instant now = Instant.now();
    X509Certificate node = ca.issueNode(List.of("n2"), Duration.ofDays(1)).certificate();
    X509Certificate alice =
        ca.issue("alice", List.of(), now.minusSeconds(60), now.plusSeconds(3600)).certificate();
    X509Certificate foreign =
        CertificateAuthority.create("other", Duration.ofDays(1))
            .issueNode(List.of("n2"), Duration.ofDays(1))
            .certificate();
    trust.checkClientTrusted(new X509Certificate[] {node}, "ECDHE_ECDSA");
    assertThatThrownBy(() -> trust.checkClientTrusted(new X509Certificate[] {alice}, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining("\"alice\" is not a cluster node");
    assertThatThrownBy(
            () -> trust.checkClientTrusted(new X509Certificate[] {foreign}, "ECDHE_ECDSA"))
        .isInstanceOf(CertificateException.class);
  }
}
