package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import io.shale.node.snapshot.proto.FetchRequest;
import io.shale.node.snapshot.proto.FileChunk;
import io.shale.node.snapshot.proto.SnapshotTransferGrpc;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot stream goes at its reader's pace, over a real gRPC connection: a peer that asks for
 * one chunk of a 64 MiB file and then stops reading holds the sender to a few chunks (its
 * flow-control window), not the file; when it reads again, the whole file arrives.
 */
class SnapshotStreamPacingTest {
  private static final int FILE_CHUNKS = 64;

  @TempDir Path dir;

  @Test
  void aReaderThatStopsReadingHoldsTheSenderToAFewChunks() throws Exception {
    CheckpointStore store = new CheckpointStore(dir.resolve("checkpoints"), Duration.ofHours(1));
    try (Engine e = Engine.open(dir.resolve("engine"), EngineOptions.defaults())) {
      e.apply(new WriteBatch().put(new byte[] {1}, new byte[] {1}), 1);
      store.take(e, i -> 1);
    }
    CheckpointStore.Transfer t = store.pinNewest();
    byte[] data = new byte[FILE_CHUNKS * SnapshotTransferService.CHUNK_BYTES];
    new Random(7).nextBytes(data);
    Files.write(t.checkpoint().directory().resolve("000999.blob"), data);

    AtomicInteger sent = new AtomicInteger();
    ServerInterceptor countSends =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            return next.startCall(
                new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                  @Override
                  public void sendMessage(R message) {
                    sent.incrementAndGet();
                    super.sendMessage(message);
                  }
                },
                headers);
          }
        };
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                ServerInterceptors.intercept(
                    new SnapshotTransferService(store, () -> null), countSends))
            .build()
            .start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
            .usePlaintext()
            .maxInboundMessageSize(4 << 20)
            .build();
    try {
      AtomicInteger received = new AtomicInteger();
      AtomicLong bytes = new AtomicLong();
      CompletableFuture<Void> first = new CompletableFuture<>();
      CompletableFuture<Status> end = new CompletableFuture<>();
      ClientCall<FetchRequest, FileChunk> call =
          channel.newCall(
              SnapshotTransferGrpc.getFetchMethod(),
              CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(FileChunk chunk) {
              received.incrementAndGet();
              bytes.addAndGet(chunk.getData().size());
              first.complete(null);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              end.complete(status);
            }
          },
          new Metadata());
      call.sendMessage(
          FetchRequest.newBuilder().setTransfer(t.token()).setName("000999.blob").build());
      call.halfClose();
      call.request(1);
      first.get(30, TimeUnit.SECONDS);

      // Unpaced, all 64 chunks leave within milliseconds; watch the sender for two seconds.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (System.nanoTime() < until && sent.get() <= 4) {
        Thread.sleep(20); // observing that nothing more is sent, for a fixed window
      }
      assertThat(sent.get()).as("chunks sent to a reader that took one").isLessThanOrEqualTo(4);
      assertThat(received.get()).isEqualTo(1);

      call.request(Integer.MAX_VALUE);
      assertThat(end.get(60, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
      assertThat(received.get()).isEqualTo(FILE_CHUNKS);
      assertThat(bytes.get()).isEqualTo(data.length);
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
