package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.node.local.LocalCluster;
import io.shale.node.transport.PeerTls;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Certificates rotated on disk are taken without a restart: every node presents its new certificate
 * on new connections within its reload interval, while writes on every node go on without a single
 * failure, and a client connecting afresh is served.
 */
class CertificateReloadTest {
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

  /** The serial number of the certificate {@code node}'s API port presents to a new connection. */
  private BigInteger served(String node) throws Exception {
    X509Certificate ca;
    try (InputStream in = Files.newInputStream(cluster.tlsFiles(node).caFile())) {
      ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    String[] hostPort = cluster.peer(node).apiAddress().split(":");
    try (SSLSocket s =
        (SSLSocket)
            ctx.getSocketFactory().createSocket(hostPort[0], Integer.parseInt(hostPort[1]))) {
      s.setSoTimeout(5_000);
      s.startHandshake();
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  @Test
  void rotatedCertificatesAreTakenUnderLoadWithoutAFailedRequest() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    cluster.leader();
    List<String> nodes = cluster.running();
    Map<String, BigInteger> before = new HashMap<>();
    for (String n : nodes) {
      before.put(n, served(n));
    }
    AtomicLong written = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> writers = new ArrayList<>();
    for (String n : nodes) {
      KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(channels.to(cluster, n));
      Thread t =
          new Thread(
              () -> {
                for (long i = 0; !stopWriting; i++) {
                  try {
                    kv.withDeadlineAfter(20, TimeUnit.SECONDS)
                        .put(
                            PutRequest.newBuilder()
                                .setKey(ByteString.copyFromUtf8(n + "/" + i))
                                .setValue(ByteString.copyFromUtf8("v"))
                                .build());
                    written.incrementAndGet();
                  } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                  }
                }
              },
              "writer-" + n);
      t.start();
      writers.add(t);
    }
    try {
      awaitWrites(written, 30);
      // Rotation: a new key and certificate from the same CA for every node, written in place.
      for (String n : nodes) {
        PeerTls.Files files = cluster.tlsFiles(n);
        cluster
            .authority()
            .issueNode(List.of("127.0.0.1", "localhost"), Duration.ofDays(1))
            .write(files.certFile(), files.keyFile());
      }
      long deadline =
          System.nanoTime() + PeerTls.Files.DEFAULT_RELOAD_INTERVAL.multipliedBy(4).toNanos();
      for (String n : nodes) {
        while (served(n).equals(before.get(n))) {
          assertThat(System.nanoTime())
              .as("%s presents its new certificate", n)
              .isLessThan(deadline);
          Thread.sleep(100);
        }
        assertThat(cluster.node(n).peerTls().serialNumber()).isEqualTo(served(n));
      }
      awaitWrites(written, 30);
    } finally {
      stopWriting = true;
      for (Thread t : writers) {
        t.join(30_000);
      }
    }
    assertThat(failure.get()).as("a request failed during the rotation").isNull();
    // A client connecting afresh after the rotation is served too.
    try (ApiChannels fresh = new ApiChannels()) {
      String n = nodes.get(0);
      assertThat(
              KVGrpc.newBlockingStub(fresh.to(cluster, n))
                  .get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(n + "/0")).build())
                  .getFound())
          .isTrue();
    }
  }

  private volatile boolean stopWriting;

  /** Waits until {@code more} further writes have succeeded. */
  private static void awaitWrites(AtomicLong written, long more) throws InterruptedException {
    long target = written.get() + more;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (written.get() < target) {
      assertThat(System.nanoTime()).as("writes go on").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
