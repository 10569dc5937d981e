package io.shale.ops.cluster;

import io.grpc.ManagedChannel;
import io.shale.node.transport.NodeChannels;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Blocking stubs over a few HTTP/2 connections to one server, or to each of several, handed out
 * round-robin, as a client library pools its connections (and spreads reads over members); both
 * systems under test are driven through these.
 */
final class StubPool<S> implements AutoCloseable {
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<S> stubs = new ArrayList<>();
  private final AtomicInteger next = new AtomicInteger();

  /** {@code connections} plaintext channels to {@code hostPort}, each with a stub. */
  StubPool(String hostPort, int connections, Function<ManagedChannel, S> stub) {
    this(hostPort, connections, stub, hp -> NodeChannels.open(hp, 32 << 20));
  }

  /** {@code connections} channels opened by {@code open}, each with a stub made by {@code stub}. */
  StubPool(
      String hostPort,
      int connections,
      Function<ManagedChannel, S> stub,
      Function<String, ManagedChannel> open) {
    this(List.of(hostPort), connections, stub, open);
  }

  /** {@code connections} channels to each of {@code hostPorts}, interleaved. */
  StubPool(
      List<String> hostPorts,
      int connections,
      Function<ManagedChannel, S> stub,
      Function<String, ManagedChannel> open) {
    for (int i = 0; i < connections; i++) {
      for (String hostPort : hostPorts) {
        ManagedChannel ch = open.apply(hostPort);
        channels.add(ch);
        stubs.add(stub.apply(ch));
      }
    }
  }

  /** The first connection's stub to the {@code i}th host (interleaving puts it at {@code i}). */
  S at(int i) {
    return stubs.get(i);
  }

  S next() {
    return stubs.get(Math.floorMod(next.getAndIncrement(), stubs.size()));
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
  }
}
