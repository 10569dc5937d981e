package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.MembersResponse;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reads go to every endpoint in turn, passing over one that failed recently. */
class EndpointsTest {
  private final Endpoints endpoints =
      new Endpoints(
          List.of("a:1", "b:1", "c:1"),
          a -> NettyChannelBuilder.forTarget("localhost:1").usePlaintext().build());

  @AfterEach
  void close() {
    endpoints.close();
  }

  private List<Integer> next(int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(endpoints.nextHealthy());
    }
    return out;
  }

  @Test
  void readsGoToEveryEndpointInTurn() {
    assertThat(next(6)).containsExactly(0, 1, 2, 0, 1, 2);
  }

  @Test
  void aFailedEndpointIsPassedOverWhileTheLeaderStaysPreferredForWrites() {
    endpoints.leaderAt("c:1");
    endpoints.failed(1);
    assertThat(next(6)).doesNotContain(1).contains(0, 2);
    assertThat(endpoints.preferred()).isEqualTo(2);
  }

  @Test
  void whenEveryEndpointFailedRecentlyReadsStillGoSomewhere() {
    endpoints.failed(0);
    endpoints.failed(1);
    endpoints.failed(2);
    assertThat(next(3)).containsExactlyInAnyOrder(0, 1, 2);
  }

  /**
   * A node down long enough for gRPC's reconnect backoff to grow to seconds is reached on the first
   * call after it is back, not once that backoff ends.
   */
  /**
   * A node down long enough for gRPC's reconnect backoff to grow to seconds is reached on the first
   * call after it is back, not once that backoff ends.
   */
  @Test
  void aNodeBackFromAnOutageIsReachedAtOnceThoughItsChannelBackedOff() throws Exception {
    ServerSocket down = new ServerSocket(0);
    int port = down.getLocalPort();
    AtomicReference<ManagedChannel> raw = new AtomicReference<>();
    try (Endpoints one =
        new Endpoints(
            List.of("127.0.0.1:" + port),
            a -> {
              raw.set(NettyChannelBuilder.forTarget(a).usePlaintext().build());
              return raw.get();
            })) {
      // The node is down: each connection is dropped at once, and the channel tries again after
      // a growing backoff (1 s, 1.6 s, 2.6 s, ... in gRPC's default policy). After four dropped
      // connections its next attempt is three seconds or more away.
      raw.get().getState(true);
      try (down) {
        for (int dropped = 0; dropped < 4; dropped++) {
          down.accept().close();
        }
      }
      assertThat(raw.get().getState(false)).isEqualTo(ConnectivityState.TRANSIENT_FAILURE);

      Server node =
          NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
              .addService(
                  new ClusterGrpc.ClusterImplBase() {
                    @Override
                    public void listMembers(
                        ListMembersRequest request, StreamObserver<MembersResponse> out) {
                      out.onNext(MembersResponse.newBuilder().setLeaderId("n1").build());
                      out.onCompleted();
                    }
                  })
              .build()
              .start();
      try {
        // The first call may still fail at once (the reconnect it asked for is under way); the
        // node answers well before the channel's own backoff (3.3 s or more) would have ended.
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_500);
        String leader = null;
        while (leader == null && System.nanoTime() < deadline) {
          try {
            leader =
                ClusterGrpc.newBlockingStub(one.channel(0))
                    .withDeadlineAfter(500, TimeUnit.MILLISECONDS)
                    .listMembers(ListMembersRequest.getDefaultInstance())
                    .getLeaderId();
          } catch (StatusRuntimeException notYet) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
          }
        }
        assertThat(leader).as("answer within 1.5 s of the node's return").isEqualTo("n1");
      } finally {
        node.shutdownNow();
      }
    }
  }
}
