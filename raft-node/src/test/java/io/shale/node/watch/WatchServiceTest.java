package io.shale.node.watch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.WatchGrpc;
import io.shale.client.proto.WatchRequest;
import io.shale.client.proto.WatchResponse;
import io.shale.node.statemachine.KeyChange;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Watch service over a real gRPC server, fed changes by hand: flow control and its limits. */
class WatchServiceTest {
  private WatchService watch;
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    watch = new WatchService(64 << 10, () -> "n1", () -> 1, Duration.ofMillis(200));
    watch.restartAfter(0);
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(watch)
            .build()
            .start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    watch.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private void awaitStreams(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (watch.streams() != n && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(1);
    }
    assertThat(watch.streams()).as("streams open").isEqualTo(n);
  }

  private static KeyChange put(String key, int bytes) {
    return new KeyChange(key.getBytes(UTF_8), new byte[bytes], 1, 1);
  }

  /** A client that takes responses only when asked to (its own flow control). */
  static final class SlowReader implements ClientResponseObserver<WatchRequest, WatchResponse> {
    final BlockingQueue<WatchResponse> responses = new LinkedBlockingQueue<>();
    final CompletableFuture<Status> closed = new CompletableFuture<>();
    volatile ClientCallStreamObserver<WatchRequest> call;

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
      call = requestStream;
      requestStream.disableAutoRequestWithInitial(1);
    }

    @Override
    public void onNext(WatchResponse value) {
      responses.add(value);
    }

    @Override
    public void onError(Throwable t) {
      closed.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      closed.complete(Status.OK);
    }
  }

  private WatchRequest prefix(String p) {
    return WatchRequest.newBuilder()
        .setKey(ByteString.copyFromUtf8(p))
        .setKind(WatchRequest.Kind.PREFIX)
        .build();
  }

  @Test
  void aQuietWatchHearsProgressAsTheClusterMovesOn() throws Exception {
    SlowReader r = new SlowReader();
    WatchGrpc.newStub(channel).watch(prefix("quiet/"), r);
    WatchResponse created = r.responses.poll(10, TimeUnit.SECONDS);
    assertThat(created.getHeader().getAppliedIndex()).isZero(); // starts at 1
    for (long i = 1; i <= 5; i++) {
      watch.applied(i, List.of(put("busy/" + i, 10)));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    WatchResponse progress = null;
    while (System.nanoTime() < deadline) {
      r.call.request(1);
      WatchResponse next = r.responses.poll(1, TimeUnit.SECONDS);
      if (next != null && next.getHeader().getAppliedIndex() == 5) {
        progress = next;
        break;
      }
    }
    assertThat(progress).as("a progress response through index 5").isNotNull();
    assertThat(progress.getEventsList()).isEmpty();
  }

  @Test
  void aWatcherThatStopsReadingIsCancelledByNameWhenTheHistoryMovesPastIt() throws Exception {
    SlowReader r = new SlowReader();
    WatchGrpc.newStub(channel).watch(prefix("k/"), r);
    assertThat(r.responses.poll(10, TimeUnit.SECONDS)).isNotNull(); // created
    awaitStreams(1);
    // Changes of 16 KiB through a 64 KiB history while the client takes nothing more, until the
    // node lets the stream go. How many that takes depends on how far the sender got before the
    // history moved on and on what the HTTP/2 window buffers (auto-tuned up to 8 MiB).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    long index = 0;
    while (watch.streams() > 0 && System.nanoTime() < deadline) {
      index++;
      watch.applied(index, List.of(put("k/" + index, 16 << 10)));
    }
    assertThat(watch.streams()).as("streams open after %d changes", index).isZero();
    // The status follows the responses already in flight, as gRPC orders them: the client hears
    // it once it reads again.
    r.call.request(Integer.MAX_VALUE);
    Status s = r.closed.get(20, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.getDescription()).contains("fell behind", "watch.history_size");
  }

  /** Ten changes of 16 KiB through a 64 KiB history: it holds the last three (8, 9, 10). */
  @Test
  void aStartBeforeTheHistoryIsRefusedWithTheOldestIndexHeld() throws Exception {
    for (long i = 1; i <= 10; i++) {
      watch.applied(i, List.of(put("k/" + i, 16 << 10)));
    }
    SlowReader r = new SlowReader();
    WatchGrpc.newStub(channel).watch(prefix("k/").toBuilder().setStartIndex(1).build(), r);
    Status s = r.closed.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(s.getDescription()).contains("starts at 8");
  }

  @Test
  void theTrailersNameTheReasonAndTheOldestIndex() throws Exception {
    for (long i = 1; i <= 10; i++) {
      watch.applied(i, List.of(put("k/" + i, 16 << 10)));
    }
    var it =
        WatchGrpc.newBlockingStub(channel).watch(prefix("k/").toBuilder().setStartIndex(2).build());
    try {
      it.next();
      throw new AssertionError("expected a refusal");
    } catch (io.grpc.StatusRuntimeException e) {
      assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(ErrorTrailers.COMPACTED);
      assertThat(e.getTrailers().get(ErrorTrailers.COMPACT_INDEX)).isEqualTo("8");
    }
  }

  @Test
  void previousValuesGoOnlyToWatchesThatAskAndOnlyFromANodeThatKeepsThem() throws Exception {
    // This node keeps none: a watch asking for them is refused by name.
    SlowReader refused = new SlowReader();
    WatchGrpc.newStub(channel).watch(prefix("p/").toBuilder().setPrevValues(true).build(), refused);
    Status s = refused.closed.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(s.getDescription()).contains("watch.prev_values");

    WatchService keeping =
        new WatchService(64 << 10, () -> "n2", () -> 1, Duration.ofSeconds(5), true);
    keeping.restartAfter(0);
    assertThat(keeping.previousValues()).isTrue();
    Server other =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(keeping)
            .build()
            .start();
    ManagedChannel ch =
        NettyChannelBuilder.forAddress("127.0.0.1", other.getPort()).usePlaintext().build();
    try {
      SlowReader with = new SlowReader();
      SlowReader without = new SlowReader();
      WatchGrpc.newStub(ch).watch(prefix("p/").toBuilder().setPrevValues(true).build(), with);
      WatchGrpc.newStub(ch).watch(prefix("p/"), without);
      with.responses.poll(10, TimeUnit.SECONDS); // where each starts
      without.responses.poll(10, TimeUnit.SECONDS);
      keeping.applied(
          1,
          List.of(
              new KeyChange(
                  "p/a".getBytes(UTF_8),
                  "new".getBytes(UTF_8),
                  1,
                  2,
                  new KeyChange.Previous("old".getBytes(UTF_8), 0, 1, 1))));
      with.call.request(1);
      without.call.request(1);
      WatchResponse a = with.responses.poll(10, TimeUnit.SECONDS);
      WatchResponse b = without.responses.poll(10, TimeUnit.SECONDS);
      assertThat(a.getEvents(0).getHasPrev()).isTrue();
      assertThat(a.getEvents(0).getPrevValue().toStringUtf8()).isEqualTo("old");
      assertThat(a.getEvents(0).getPrevVersion()).isEqualTo(1);
      assertThat(b.getEvents(0).getHasPrev()).isFalse();
      assertThat(b.getEvents(0).getPrevValue().isEmpty()).isTrue();
    } finally {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      keeping.close();
      other.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
