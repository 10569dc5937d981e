package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.Server;
import io.grpc.TlsServerCredentials;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's TLS settings against a real gRPC server speaking TLS (Shale's node serves plaintext
 * today, so the server here answers Get only): server authentication with a trust file, and mutual
 * TLS, with a self-signed certificate made by the JDK's keytool.
 */
class TlsSettingsTest {
  @TempDir Path dir;

  private Path cert;
  private Path key;
  private Server server;

  @BeforeEach
  void makeCertificate() throws Exception {
    Path store = dir.resolve("ks.p12");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "shale",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=ip:127.0.0.1,dns:localhost",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (FileInputStream in = new FileInputStream(store.toFile())) {
      ks.load(in, "changeit".toCharArray());
    }
    Certificate c = ks.getCertificate("shale");
    PrivateKey k = (PrivateKey) ks.getKey("shale", "changeit".toCharArray());
    cert = dir.resolve("cert.pem");
    key = dir.resolve("key.pem");
    Files.writeString(cert, pem("CERTIFICATE", c.getEncoded()));
    Files.writeString(key, pem("PRIVATE KEY", k.getEncoded()));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private String startServer(boolean requireClientCertificate) throws Exception {
    TlsServerCredentials.Builder creds =
        TlsServerCredentials.newBuilder().keyManager(cert.toFile(), key.toFile());
    if (requireClientCertificate) {
      creds.trustManager(cert.toFile()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
    }
    server =
        Grpc.newServerBuilderForPort(0, creds.build())
            .addService(
                new KVGrpc.KVImplBase() {
                  @Override
                  public void get(GetRequest req, StreamObserver<GetResponse> out) {
                    out.onNext(
                        GetResponse.newBuilder()
                            .setFound(true)
                            .setValue(ByteString.copyFromUtf8("over tls"))
                            .setModIndex(7)
                            .build());
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    return "127.0.0.1:" + server.getPort();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.shutdownNow();
    }
  }

  private ShaleClient client(String endpoint, TlsSettings tls) {
    return ShaleClient.builder()
        .endpoints(endpoint)
        .tls(tls)
        .deadline(Duration.ofSeconds(5))
        .retryPolicy(new RetryPolicy(2, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(2)))
        .build();
  }

  @Test
  void serverAuthenticationWithATrustFile() throws Exception {
    String endpoint = startServer(false);
    try (ShaleClient c = client(endpoint, TlsSettings.trust(cert))) {
      Entry e = c.get("k");
      assertThat(e.valueUtf8()).isEqualTo("over tls");
      assertThat(e.modIndex()).isEqualTo(7);
    }
    // Plaintext against a TLS server fails, as it should.
    try (ShaleClient plain =
        ShaleClient.builder()
            .endpoints(endpoint)
            .retryPolicy(new RetryPolicy(2, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(2)))
            .build()) {
      assertThatThrownBy(() -> plain.get("k")).isInstanceOf(ShaleException.class);
    }
  }

  @Test
  void mutualTlsNeedsTheClientCertificate() throws Exception {
    String endpoint = startServer(true);
    try (ShaleClient withCert = client(endpoint, TlsSettings.mutual(cert, cert, key))) {
      assertThat(withCert.get("k").valueUtf8()).isEqualTo("over tls");
    }
    try (ShaleClient without = client(endpoint, TlsSettings.trust(cert))) {
      assertThatThrownBy(() -> without.get("k")).isInstanceOf(ShaleUnavailableException.class);
    }
  }

  @Test
  void badSettingsFailWhenBuiltNamingTheFile() {
    Path missing = dir.resolve("missing.pem");
    assertThatThrownBy(() -> TlsSettings.trust(missing))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(missing.toString());
    assertThatThrownBy(() -> new TlsSettings(null, cert, null))
        .hasMessageContaining("needs its private key");
  }
}
