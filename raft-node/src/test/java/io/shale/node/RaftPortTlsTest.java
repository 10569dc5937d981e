package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.StatusResponse;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import io.shale.node.snapshot.proto.ManifestRequest;
import io.shale.node.snapshot.proto.ManifestResponse;
import io.shale.node.snapshot.proto.SnapshotTransferGrpc;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.transport.CertificateAuthority;
import io.shale.node.transport.PeerChannels;
import io.shale.node.transport.PeerTls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster whose Raft ports speak mutual TLS: its nodes replicate, forward and read through them,
 * and a raw Ratis client that is not a cluster node (no certificate, another CA's, or a user's
 * certificate from the cluster's CA) gets no entry into the log.
 */
class RaftPortTlsTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private final ApiChannels channels = new ApiChannels();

  @AfterEach
  void stop() throws IOException {
    channels.close();
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ByteString s(String v) {
    return ByteString.copyFromUtf8(v);
  }

  private KVGrpc.KVBlockingStub kv(String node) {
    return KVGrpc.newBlockingStub(channels.to(cluster, node))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static Message put(String key) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    return Message.valueOf(
        org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(
            CommandCodec.encode(new Command.Batch(List.of(new Command.Op(k, k))))));
  }

  /** A Ratis client of the cluster's group with {@code tls} (null: plaintext), failing fast. */
  private RaftClient rawClient(GrpcTlsConfig tls) {
    RaftProperties p = new RaftProperties(cluster.properties());
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(2, TimeUnit.SECONDS));
    RaftClient.Builder b =
        RaftClient.newBuilder()
            .setProperties(p)
            .setRaftGroup(cluster.group())
            .setRetryPolicy(RetryPolicies.noRetry());
    if (tls != null) {
      Parameters params = new Parameters();
      GrpcConfigKeys.Client.setTlsConf(params, tls);
      GrpcConfigKeys.Admin.setTlsConf(params, tls);
      b.setParameters(params);
    }
    return b.build();
  }

  /**
   * A client presenting {@code issued} and trusting the cluster's CA (so only the server decides).
   */
  private GrpcTlsConfig presenting(String name, CertificateAuthority.Issued issued) {
    Path cert = dir.resolve("outsiders").resolve(name + ".pem");
    Path key = dir.resolve("outsiders").resolve(name + "-key.pem");
    issued.write(cert, key);
    return new GrpcTlsConfig(
        key.toFile(), cert.toFile(), cluster.tlsFiles("n1").caFile().toFile(), true);
  }

  private void assertRefused(RaftClient outsider, String key) {
    try (outsider) {
      assertThatThrownBy(
              () -> {
                RaftClientReply r = outsider.io().send(put(key));
                if (!r.isSuccess()) {
                  throw r.getException();
                }
              })
          .as("a write from an outsider (%s)", key)
          .isInstanceOf(IOException.class);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void nodesSpeakMutualTlsAndOutsidersAreRefusedAtTheRaftPort() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    String leader = cluster.leader();
    String follower = cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().get();

    // A write at a follower travels to the leader on the forwarder, then to every replica.
    kv(follower).put(PutRequest.newBuilder().setKey(s("a")).setValue(s("1")).build());
    // A Ratis client holding a node certificate of the cluster's CA is a node: it may write.
    try (RaftClient node = cluster.client()) {
      assertThat(node.io().send(put("b")).isSuccess()).isTrue();
    }

    Instant now = Instant.now();
    // The same raw client with a node certificate is taken: what refuses the others is who they
    // are, not how they connect.
    try (RaftClient nodeLike =
        rawClient(
            presenting(
                "node-like",
                cluster.authority().issueNode(List.of("127.0.0.1"), Duration.ofDays(1))))) {
      assertThat(nodeLike.io().send(put("c")).isSuccess()).isTrue();
    }
    CertificateAuthority other = CertificateAuthority.create("other-ca", Duration.ofDays(1));
    assertRefused(rawClient(null), "plaintext");
    assertRefused(
        rawClient(presenting("foreign", other.issueNode(List.of("127.0.0.1"), Duration.ofDays(1)))),
        "foreign");
    assertRefused(
        rawClient(
            presenting(
                "alice",
                cluster
                    .authority()
                    .issue(
                        "alice",
                        List.of("127.0.0.1"),
                        now.minusSeconds(60),
                        now.plusSeconds(3600)))),
        "alice");

    // Every node holds what nodes wrote and nothing of what the outsiders sent. A linearizable
    // read on a follower takes a ReadIndex round over the TLS port.
    for (String n : cluster.running()) {
      assertThat(kv(n).get(GetRequest.newBuilder().setKey(s("a")).build()).getValue())
          .isEqualTo(s("1"));
      assertThat(kv(n).get(GetRequest.newBuilder().setKey(s("b")).build()).getValue())
          .isEqualTo(s("b"));
      for (String refused : List.of("plaintext", "foreign", "alice")) {
        assertThat(kv(n).get(GetRequest.newBuilder().setKey(s(refused)).build()).getFound())
            .as("%s on %s", refused, n)
            .isFalse();
      }
    }
  }

  @Test
  void aNodeWithAnotherCasCertificateDoesNotStartAndOneTrustingAnotherCaGetsNoEntries()
      throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    cluster.leader();
    cluster.stop("n3");
    CertificateAuthority other = CertificateAuthority.create("other-ca", Duration.ofDays(1));
    PeerTls.Files n3 = cluster.tlsFiles("n3");
    Path otherCa = dir.resolve("other").resolve("ca.pem");
    Path otherCert = dir.resolve("other").resolve("n3.pem");
    Path otherKey = dir.resolve("other").resolve("n3-key.pem");
    other.writeCertificate(otherCa);
    other.issueNode(List.of("127.0.0.1"), Duration.ofDays(1)).write(otherCert, otherKey);
    // Its certificate is not from the CA it was given: it refuses to start, naming the files.
    NodeConfig mixed =
        withTls(
            cluster.config("n3"),
            new PeerTls.Files(n3.caFile(), otherCert, otherKey, "shale-node"));
    assertThatThrownBy(() -> ShaleNode.start(mixed))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(otherCert + " is not issued by the CA in " + n3.caFile());
    // Consistent but foreign (another CA for all three files): it starts, and neither side
    // accepts the other, so it receives no entry while the two others commit.
    NodeConfig foreign =
        withTls(
            cluster.config("n3"), new PeerTls.Files(otherCa, otherCert, otherKey, "shale-node"));
    try (ShaleNode outsider = ShaleNode.start(foreign)) {
      long before = applied(cluster.node(cluster.leader()));
      for (int i = 0; i < 20; i++) {
        kv("n1").put(PutRequest.newBuilder().setKey(s("after" + i)).setValue(s("x")).build());
      }
      assertThat(kv("n2").get(GetRequest.newBuilder().setKey(s("after19")).build()).getValue())
          .isEqualTo(s("x"));
      long committed = applied(cluster.node(cluster.leader()));
      assertThat(committed).isGreaterThanOrEqualTo(before + 20);
      assertThat(applied(outsider))
          .as("entries the outsider applied (it stopped at or before %d)", before)
          .isLessThanOrEqualTo(before);
    }
  }

  @Test
  void peersCheckThatANodesCertificateNamesTheAddressTheyDial() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    cluster.leader();
    cluster.stop("n3");
    // An entry n3 misses keeps its log behind, so it can never win an election: n3 dials its
    // peers with a valid client certificate, and elected on an equally long log it would lead a
    // cluster whose other nodes cannot dial it back (forwarded writes would then all fail).
    kv("n1").put(PutRequest.newBuilder().setKey(s("while-n3-is-down")).setValue(s("x")).build());
    // A valid node certificate of the cluster's CA, but for a host n3 is not dialled at.
    PeerTls.Files n3 = cluster.tlsFiles("n3");
    cluster
        .authority()
        .issueNode(List.of("elsewhere.invalid"), Duration.ofDays(1))
        .write(n3.certFile(), n3.keyFile());
    cluster.start("n3");
    long before = applied(cluster.node(cluster.leader()));
    for (int i = 0; i < 20; i++) {
      kv("n1").put(PutRequest.newBuilder().setKey(s("k" + i)).setValue(s("x")).build());
    }
    assertThat(kv("n2").get(GetRequest.newBuilder().setKey(s("k19")).build()).getValue())
        .isEqualTo(s("x"));
    assertThat(applied(cluster.node("n3")))
        .as("entries n3 applied (it stopped at or before %d)", before)
        .isLessThanOrEqualTo(before);
  }

  /**
   * Snapshot transfer and a node's own status answer on the Raft port, to nodes only; the client
   * API port does not serve snapshot transfer at all.
   */
  @Test
  void peerServicesAnswerNodesOnlyAndOnlyOnTheRaftPort() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    String leader = cluster.leader();
    kv(leader).put(PutRequest.newBuilder().setKey(s("a")).setValue(s("1")).build());
    String leaderRaft = cluster.peer(leader).raftAddress();
    try (PeerChannels node =
            new PeerChannels(PeerTls.load(cluster.tlsFiles("n1"), Instant.now()), 4 << 20);
        PeerChannels plaintext = new PeerChannels(null, 4 << 20)) {
      StatusResponse status =
          ClusterGrpc.newBlockingStub(node.to(leaderRaft))
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .status(StatusRequest.newBuilder().setLocalOnly(true).build());
      assertThat(status.getNodes(0).getMember().getId()).isEqualTo(leader);
      ManifestResponse m =
          SnapshotTransferGrpc.newBlockingStub(node.to(leaderRaft))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .manifest(ManifestRequest.newBuilder().setMinIndex(1).setRequester("n1").build());
      assertThat(m.getFilesCount()).isPositive();

      // Outsiders: no certificate, a user's certificate from the cluster's own CA, a node of
      // another cluster.
      Path aliceCert = dir.resolve("outsiders").resolve("alice.pem");
      Path aliceKey = dir.resolve("outsiders").resolve("alice-key.pem");
      Instant now = Instant.now();
      cluster
          .authority()
          .issue("alice", List.of("127.0.0.1"), now.minusSeconds(60), now.plusSeconds(3600))
          .write(aliceCert, aliceKey);
      ManagedChannel alice =
          NettyChannelBuilder.forTarget(leaderRaft)
              .sslContext(
                  GrpcSslContexts.forClient()
                      .keyManager(aliceCert.toFile(), aliceKey.toFile())
                      .trustManager(cluster.tlsFiles("n1").caFile().toFile())
                      .build())
              .build();
      try {
        // A node of another cluster: a node certificate, but of another CA.
        CertificateAuthority otherCa = CertificateAuthority.create("other-ca", Duration.ofDays(1));
        Path otherDir = dir.resolve("other-cluster");
        otherCa.writeCertificate(otherDir.resolve("ca.pem"));
        otherCa
            .issueNode(List.of("127.0.0.1"), Duration.ofDays(1))
            .write(otherDir.resolve("n9.pem"), otherDir.resolve("n9-key.pem"));
        PeerChannels foreignNode =
            new PeerChannels(
                PeerTls.load(
                    new PeerTls.Files(
                        otherDir.resolve("ca.pem"),
                        otherDir.resolve("n9.pem"),
                        otherDir.resolve("n9-key.pem"),
                        PeerTls.DEFAULT_PEER_NAME),
                    Instant.now()),
                4 << 20);
        for (ManagedChannel outsider :
            List.of(plaintext.to(leaderRaft), alice, foreignNode.to(leaderRaft))) {
          assertThatThrownBy(
                  () ->
                      SnapshotTransferGrpc.newBlockingStub(outsider)
                          .withDeadlineAfter(10, TimeUnit.SECONDS)
                          .manifest(ManifestRequest.newBuilder().setRequester("x").build()))
              .isInstanceOfSatisfying(
                  StatusRuntimeException.class,
                  e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        }
        foreignNode.close();
      } finally {
        alice.shutdownNow();
      }
    }
    assertThatThrownBy(
            () ->
                SnapshotTransferGrpc.newBlockingStub(channels.to(cluster, leader))
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .manifest(ManifestRequest.newBuilder().setRequester("x").build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
  }

  /** The last index {@code node} applied. */
  private long applied(ShaleNode node) throws IOException {
    return node.server().getDivision(cluster.group().getGroupId()).getInfo().getLastAppliedIndex();
  }

  private static NodeConfig withTls(NodeConfig c, PeerTls.Files tls) {
    return new NodeConfig(
        c.id(),
        c.cluster(),
        c.dataDir(),
        c.raftAddress(),
        c.apiAddress(),
        c.httpAddress(),
        c.peers(),
        c.raft(),
        c.limits(),
        c.engine(),
        tls);
  }
}
