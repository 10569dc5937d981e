package io.shale.node.api;

import io.grpc.ManagedChannel;
import io.shale.node.transport.NodeChannels;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** gRPC channels from this node to other nodes' APIs, one per address, shared and reused. */
public final class PeerChannels implements AutoCloseable {
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final int maxMessageBytes;

  public PeerChannels(int maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  public ManagedChannel to(String address) {
    return channels.computeIfAbsent(address, a -> NodeChannels.open(a, maxMessageBytes));
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }
}
