package io.shale.node.transport;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

/**
 * Plaintext channels to a node's client API port, for the ops tools and tests that reach a node
 * configured without TLS. Node-to-node channels are {@link PeerChannels}.
 */
public final class NodeChannels {
  private NodeChannels() {}

  /** A channel to {@code target} (host:port) accepting messages up to {@code maxInboundBytes}. */
  public static ManagedChannel open(String target, int maxInboundBytes) {
    return NettyChannelBuilder.forTarget(target)
        .usePlaintext()
        .maxInboundMessageSize(maxInboundBytes)
        .build();
  }

  /** A channel for small requests (gRPC's default 4 MiB inbound limit). */
  public static ManagedChannel open(String target) {
    return open(target, 4 << 20);
  }
}
