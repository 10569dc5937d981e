package io.shale.node;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.node.local.LocalCluster;
import java.util.ArrayList;
import java.util.List;

/** Plaintext gRPC channels to the API of a local cluster's nodes, shut down together. */
final class ApiChannels implements AutoCloseable {
  private final List<ManagedChannel> open = new ArrayList<>();

  /** A new channel to node {@code id}'s API address (running or not). */
  ManagedChannel to(LocalCluster cluster, String id) {
    ManagedChannel ch =
        NettyChannelBuilder.forTarget(cluster.peer(id).apiAddress()).usePlaintext().build();
    open.add(ch);
    return ch;
  }

  @Override
  public void close() {
    open.forEach(ManagedChannel::shutdownNow);
    open.clear();
  }
}
