package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.node.local.LocalCluster;
import io.shale.node.transport.CertificateAuthority;
import io.shale.node.transport.ClusterCertificates;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code [tls]} the client API port speaks TLS with the node's certificate: a client must
 * trust the cluster's CA, and is refused with plaintext or with a certificate of another CA; a call
 * must name a user the cluster knows (here by the certificate's CN).
 */
class ApiPortTlsTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    channels.forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  private ManagedChannel channel(String node, SslContextBuilder tls) throws IOException {
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(cluster.peer(node).apiAddress());
    ManagedChannel ch = (tls == null ? b.usePlaintext() : b.sslContext(tls.build())).build();
    channels.add(ch);
    return ch;
  }

  private SslContextBuilder trustingCluster() {
    return GrpcSslContexts.forClient().trustManager(cluster.tlsFiles("n1").caFile().toFile());
  }

  private static void put(ManagedChannel ch, String key) {
    KVGrpc.newBlockingStub(ch)
        .withDeadlineAfter(20, TimeUnit.SECONDS)
        .put(
            PutRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFromUtf8("v"))
                .build());
  }

  private static void assertUnavailable(ManagedChannel ch, String what) {
    assertRefused(ch, what, Status.Code.UNAVAILABLE);
  }

  private static void assertRefused(ManagedChannel ch, String what, Status.Code code) {
    assertThatThrownBy(() -> put(ch, what))
        .as(what)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode()).isEqualTo(code));
  }

  private Path[] issued(String name, CertificateAuthority ca) {
    Path cert = dir.resolve("clients").resolve(name + ".pem");
    Path key = dir.resolve("clients").resolve(name + "-key.pem");
    Instant now = Instant.now();
    ca.issue(name, List.of("127.0.0.1"), now.minusSeconds(60), now.plusSeconds(3600))
        .write(cert, key);
    return new Path[] {cert, key};
  }

  /** Presents its one certificate whatever issuers the server asks for. */
  private static final class Insisting extends X509ExtendedKeyManager {
    private final CertificateAuthority.Issued issued;

    Insisting(CertificateAuthority.Issued issued) {
      this.issued = issued;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine e) {
      return "it";
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return "it";
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return new String[] {"it"};
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return new X509Certificate[] {issued.certificate()};
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return issued.key();
    }
  }

  @Test
  void clientsMustTrustTheClusterCaAndPresentACertificateOfAKnownUser() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    String leader = cluster.leader();

    Path certs = cluster.certificates();
    SslContextBuilder root =
        trustingCluster()
            .keyManager(
                ClusterCertificates.clientCertificate(certs, "root").toFile(),
                ClusterCertificates.clientKey(certs, "root").toFile());
    put(channel(leader, root), "root");
    // Without a certificate the handshake completes, but the call names no user.
    assertRefused(
        channel(leader, trustingCluster()), "no certificate", Status.Code.UNAUTHENTICATED);
    // A certificate of the cluster's CA for a user the cluster does not know.
    Path[] alice = issued("alice", cluster.authority());
    assertRefused(
        channel(leader, trustingCluster().keyManager(alice[0].toFile(), alice[1].toFile())),
        "alice, unknown",
        Status.Code.UNAUTHENTICATED);

    assertUnavailable(channel(leader, null), "plaintext");
    // TLS 1.2 with forward secrecy and AEAD is served; a CBC suite is not (the JDK itself no
    // longer offers TLS 1.1).
    put(
        channel(
            leader,
            trustingCluster()
                .keyManager(
                    ClusterCertificates.clientCertificate(certs, "root").toFile(),
                    ClusterCertificates.clientKey(certs, "root").toFile())
                .protocols("TLSv1.2")
                .ciphers(List.of("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"))),
        "tls-1.2");
    assertUnavailable(
        channel(
            leader,
            trustingCluster()
                .protocols("TLSv1.2")
                .ciphers(List.of("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"))),
        "a CBC cipher suite");
    CertificateAuthority other = CertificateAuthority.create("other-ca", Duration.ofDays(1));
    Path otherCa = dir.resolve("other-ca.pem");
    other.writeCertificate(otherCa);
    assertUnavailable(
        channel(leader, GrpcSslContexts.forClient().trustManager(otherCa.toFile())),
        "a client trusting another CA");
    // A client picks its certificate by the issuers the server names, so it would send none of
    // another CA's; one that insists is refused in the handshake.
    CertificateAuthority.Issued mallory =
        other.issue(
            "mallory",
            List.of("127.0.0.1"),
            Instant.now().minusSeconds(60),
            Instant.now().plusSeconds(3600));
    assertUnavailable(
        channel(leader, trustingCluster().keyManager(new Insisting(mallory))),
        "a certificate of another CA");

    assertThat(
            KVGrpc.newBlockingStub(channel(leader, root))
                .get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8("root")).build())
                .getFound())
        .isTrue();
  }
}
