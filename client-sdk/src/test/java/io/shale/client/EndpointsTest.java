package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.ArrayList;
import java.util.List;
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
}
