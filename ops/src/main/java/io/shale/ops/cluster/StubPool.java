package io.shale.ops.cluster;

import io.grpc.ManagedChannel;
import io.shale.node.transport.NodeChannels;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Blocking stubs over a few HTTP/2 connections to one server, handed out round-robin, as a client
 * library pools its connections; both systems under test are driven through one.
 */
final class StubPool<S> implements AutoCloseable {
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<S> stubs = new ArrayList<>();
  private final AtomicInteger next = new AtomicInteger();

  /** {@code connections} channels to {@code hostPort}, each with a stub made by {@code stub}. */
  StubPool(String hostPort, int connections, Function<ManagedChannel, S> stub) {
    for (int i = 0; i < connections; i++) {
      ManagedChannel ch = NodeChannels.open(hostPort, 32 << 20);
      channels.add(ch);
      stubs.add(stub.apply(ch));
    }
  }

  S next() {
    return stubs.get(Math.floorMod(next.getAndIncrement(), stubs.size()));
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
  }
}
