package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.LeaseGrantRequest;
import io.shale.client.proto.LeaseGrpc;
import io.shale.client.proto.LeaseKeepAliveRequest;
import io.shale.client.proto.LeaseKeepAliveResponse;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.PutResponse;
import io.shale.node.local.LocalCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request counts against the node's in-flight limit from the moment its message arrives, before
 * any handler runs: a client that sends large puts and never half-closes them (so their handlers
 * never start) gets RESOURCE_EXHAUSTED with a retry-after once the node holds its byte budget
 * (limits.max_inflight_write_bytes, 32 MiB by default), instead of leaving any number of parsed
 * requests on the node's heap; the admitted ones still complete when half-closed, and a lease
 * keep-alive renews meanwhile.
 */
class ApiPortArrivalTest {
  private static final int VALUE_BYTES = 4 << 20;
  private static final int CALLS = 12;

  @TempDir Path dir;

  private LocalCluster cluster;
  private ManagedChannel channel;
  private ApiChannels channels;

  @BeforeEach
  void start() throws Exception {
    cluster = new LocalCluster(dir, 1);
    channels = new ApiChannels();
    channel = channels.to(cluster, cluster.leader());
  }

  @AfterEach
  void stop() throws Exception {
    channels.close();
    cluster.close();
  }

  /** One put whose message is sent and held open: its outcome, and the call to half-close. */
  private record HeldPut(
      ClientCall<PutRequest, PutResponse> call,
      CompletableFuture<Status> outcome,
      CompletableFuture<Metadata> trailers) {}

  private HeldPut sendWithoutHalfClose(int i) {
    ClientCall<PutRequest, PutResponse> call =
        channel.newCall(
            KVGrpc.getPutMethod(), CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
    CompletableFuture<Status> outcome = new CompletableFuture<>();
    CompletableFuture<Metadata> trailers = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata t) {
            trailers.complete(t);
            outcome.complete(status);
          }
        },
        new Metadata());
    call.request(1);
    byte[] value = new byte[VALUE_BYTES];
    value[0] = (byte) i;
    call.sendMessage(
        PutRequest.newBuilder()
            .setKey(ByteString.copyFromUtf8("held/" + i))
            .setValue(ByteString.copyFrom(value))
            .build());
    return new HeldPut(call, outcome, trailers);
  }

  @Test
  void messagesHeldOpenAreCountedFromArrivalAndTheExcessIsRefused() throws Exception {
    long lease =
        LeaseGrpc.newBlockingStub(channel)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .grant(LeaseGrantRequest.newBuilder().setTtlMs(60_000).build())
            .getId();
    List<HeldPut> puts = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      puts.add(sendWithoutHalfClose(i));
    }
    // 32 MiB holds seven puts of 4 MiB and their envelopes: the other five are refused on arrival,
    // while no handler has run (nothing is half-closed yet).
    int size =
        PutRequest.newBuilder()
            .setKey(ByteString.copyFromUtf8("held/00"))
            .setValue(ByteString.copyFrom(new byte[VALUE_BYTES]))
            .build()
            .getSerializedSize();
    int budgetHolds = (int) ((32L << 20) / size);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (puts.stream().filter(p -> p.outcome().isDone()).count() < CALLS - budgetHolds
        && System.nanoTime() < deadline) {
      Thread.sleep(10); // polling a condition, with a deadline
    }
    List<HeldPut> refused = puts.stream().filter(p -> p.outcome().isDone()).toList();
    assertThat(refused).hasSize(CALLS - budgetHolds);
    for (HeldPut put : refused) {
      Status s = put.outcome().get();
      assertThat(s.getCode()).as(String.valueOf(s)).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(s.getDescription()).contains("limits.max_inflight_write_bytes");
      assertThat(put.trailers().get().get(ErrorTrailers.RETRY_AFTER_MS)).isNotNull();
    }

    // While the node holds them, a lease keep-alive (a small message of a stream, which passes
    // the gate without a permit) still renews, and the held puts stay open.
    CompletableFuture<LeaseKeepAliveResponse> renewed = new CompletableFuture<>();
    StreamObserver<LeaseKeepAliveRequest> keepAlive =
        LeaseGrpc.newStub(channel)
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .keepAlive(
                new StreamObserver<>() {
                  @Override
                  public void onNext(LeaseKeepAliveResponse r) {
                    renewed.complete(r);
                  }

                  @Override
                  public void onError(Throwable t) {
                    renewed.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {}
                });
    keepAlive.onNext(LeaseKeepAliveRequest.newBuilder().setId(lease).build());
    assertThat(renewed.get(30, TimeUnit.SECONDS).getFound()).isTrue();
    keepAlive.onCompleted();
    assertThat(puts.stream().filter(p -> p.outcome().isDone()).count())
        .as("the held puts are still open")
        .isEqualTo(CALLS - budgetHolds);

    // The admitted ones complete once half-closed, and read back.
    List<HeldPut> admitted = puts.stream().filter(p -> !refused.contains(p)).toList();
    assertThat(admitted).hasSize(budgetHolds);
    admitted.forEach(p -> p.call().halfClose());
    KVGrpc.KVBlockingStub kv =
        KVGrpc.newBlockingStub(channel)
            .withMaxInboundMessageSize(2 * VALUE_BYTES)
            .withDeadlineAfter(30, TimeUnit.SECONDS);
    for (HeldPut put : admitted) {
      assertThat(put.outcome().get(30, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
    }
    int i = puts.indexOf(admitted.get(0));
    assertThat(
            kv.get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8("held/" + i)).build())
                .getValue()
                .size())
        .isEqualTo(VALUE_BYTES);

    // Every permit was returned: the node takes the whole budget again.
    List<HeldPut> again = new ArrayList<>();
    for (int j = 0; j < budgetHolds - 1; j++) {
      again.add(sendWithoutHalfClose(100 + j));
    }
    again.forEach(p -> p.call().halfClose());
    for (HeldPut put : again) {
      assertThat(put.outcome().get(30, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
    }
  }
}
