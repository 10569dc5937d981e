package io.shale.node.transport;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * gRPC channels from this node to other nodes' Raft ports, where {@link PeerServices} answer. With
 * {@link PeerTls} a channel speaks mutual TLS: it presents this node's certificate and accepts only
 * a server certificate from the cluster's CA carrying the peer CN and naming the address dialled;
 * without it channels are plaintext, as the Raft port then is. Shared channels ({@link #to}) are
 * kept one per address until {@link #close}.
 */
public final class PeerChannels implements AutoCloseable {
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final SslContext tls;
  private final int maxMessageBytes;

  /**
   * @param tls this node's peer TLS, or null for plaintext
   * @param maxMessageBytes the largest reply a shared channel accepts
   */
  public PeerChannels(PeerTls tls, int maxMessageBytes) {
    this.tls = tls == null ? null : tls.peerClient();
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Whether channels speak mutual TLS. */
  public boolean secure() {
    return tls != null;
  }

  /** The shared channel to the Raft port at {@code raftAddress}. */
  public ManagedChannel to(String raftAddress) {
    return channels.computeIfAbsent(raftAddress, a -> open(a, maxMessageBytes));
  }

  /** A new channel to {@code raftAddress}, for the caller to shut down. */
  public ManagedChannel open(String raftAddress, int maxInboundBytes) {
    NettyChannelBuilder b =
        NettyChannelBuilder.forTarget(raftAddress).maxInboundMessageSize(maxInboundBytes);
    return (tls == null ? b.usePlaintext() : b.sslContext(tls)).build();
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }
}
