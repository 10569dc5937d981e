package io.shale.node;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.node.local.LocalCluster;
import io.shale.node.transport.ClusterCertificates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * gRPC channels to the API of a local cluster's nodes, shut down together: TLS trusting the
 * cluster's CA and presenting the user root's certificate when its nodes have certificates,
 * plaintext otherwise.
 */
final class ApiChannels implements AutoCloseable {
  private final List<ManagedChannel> open = new ArrayList<>();

  /** A new channel to node {@code id}'s API address (running or not). */
  ManagedChannel to(LocalCluster cluster, String id) {
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(cluster.peer(id).apiAddress());
    if (cluster.authority() == null) {
      b.usePlaintext();
    } else {
      try {
        Path certs = cluster.certificates();
        b.sslContext(
            GrpcSslContexts.forClient()
                .trustManager(cluster.tlsFiles(id).caFile().toFile())
                .keyManager(
                    ClusterCertificates.clientCertificate(certs, "root").toFile(),
                    ClusterCertificates.clientKey(certs, "root").toFile())
                .build());
      } catch (SSLException e) {
        throw new IllegalStateException(e);
      }
    }
    ManagedChannel ch = b.build();
    open.add(ch);
    return ch;
  }

  @Override
  public void close() {
    open.forEach(ManagedChannel::shutdownNow);
    open.clear();
  }
}
