package io.shale.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.MembersResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterAdmin#members}: a node that knows no leader (just restarted, say) does not get the
 * last word while another endpoint knows one. Each endpoint is a real gRPC server answering
 * ListMembers as a node in that state would.
 */
class MembersLeaderTest {
  private final List<Server> servers = new ArrayList<>();

  @AfterEach
  void stop() {
    servers.forEach(Server::shutdownNow);
  }

  /** A node that answers ListMembers naming {@code leader} ("" for none); counts its answers. */
  private String node(String leader, AtomicInteger asked) throws Exception {
    Server s =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new ClusterGrpc.ClusterImplBase() {
                  @Override
                  public void listMembers(
                      ListMembersRequest request, StreamObserver<MembersResponse> out) {
                    asked.incrementAndGet();
                    out.onNext(MembersResponse.newBuilder().setLeaderId(leader).build());
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    servers.add(s);
    return "127.0.0.1:" + s.getPort();
  }

  /**
   * A client of {@code endpoints}, once the question it asks the first one when built (which
   * endpoint leads) has been answered; {@code first} counts that endpoint's answers, reset here.
   */
  private static ShaleClient client(AtomicInteger first, String... endpoints)
      throws InterruptedException {
    ShaleClient c =
        ShaleClient.builder().endpoints(endpoints).deadline(Duration.ofSeconds(5)).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (first.get() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(first.get()).as("the client's own leader discovery at build").isEqualTo(1);
    first.set(0);
    return c;
  }

  @Test
  void aNodeWithoutLeaderIsPassedOverForOneThatKnowsIt() throws Exception {
    AtomicInteger lostAsked = new AtomicInteger();
    AtomicInteger lost2Asked = new AtomicInteger();
    AtomicInteger knowsAsked = new AtomicInteger();
    String lost = node("", lostAsked);
    String lost2 = node("", lost2Asked);
    String knows = node("n2", knowsAsked);
    try (ShaleClient c = client(lostAsked, lost, lost2, knows)) {
      assertThat(c.cluster().members().leaderId()).isEqualTo("n2");
    }
    assertThat(lostAsked.get()).isEqualTo(1);
    assertThat(lost2Asked.get()).isEqualTo(1);
    assertThat(knowsAsked.get()).isEqualTo(1);
  }

  @Test
  void noLeaderOnlyWhenNoEndpointKnowsOneAndEachIsAskedOnce() throws Exception {
    AtomicInteger a = new AtomicInteger();
    AtomicInteger b = new AtomicInteger();
    try (ShaleClient c = client(a, node("", a), node("", b))) {
      assertThat(c.cluster().members().leaderId()).isEmpty();
    }
    assertThat(a.get()).isEqualTo(1);
    assertThat(b.get()).isEqualTo(1);
  }

  @Test
  void aLeaderKnownAtTheFirstEndpointAsksNoOther() throws Exception {
    AtomicInteger a = new AtomicInteger();
    AtomicInteger b = new AtomicInteger();
    try (ShaleClient c = client(a, node("n1", a), node("", b))) {
      assertThat(c.cluster().members().leaderId()).isEqualTo("n1");
    }
    assertThat(a.get()).isEqualTo(1);
    assertThat(b.get()).isZero();
  }
}
