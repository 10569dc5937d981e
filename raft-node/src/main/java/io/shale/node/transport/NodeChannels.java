package io.shale.node.transport;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

/**
 * Every gRPC channel a node opens to another node (forwarding, pressure polling, snapshot transfer,
 * membership probes), and every channel the ops tools open to a node, is built here, so that
 * transport security is set in one place. Today the channels are plaintext: the node is meant for a
 * trusted network.
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
