package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.HeapBudget;
import io.shale.node.transport.PeerChannels;
import io.shale.node.transport.PeerTls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer that holds a valid node certificate and misbehaves on the Raft port: it sends an append
 * larger than any the cluster makes, and appends without end without reading a reply. The node
 * refuses the first before buffering it, paces the second by HTTP/2 flow control (the sender's call
 * stops being ready), and keeps committing writes throughout; nothing it holds grows with what the
 * peer sends (the test JVM, which hosts the nodes, would exit on an OutOfMemoryError).
 */
class RaftPortFloodTest {
  @TempDir Path dir;
  private LocalCluster cluster;
  private final ApiChannels channels = new ApiChannels();

  @AfterEach
  void stop() throws IOException {
    channels.close();
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Ratis's append stream, its messages as bytes (the wire is the same as Ratis's own stubs). */
  private static final MethodDescriptor<byte[], byte[]> APPEND =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
          .setFullMethodName("ratis.grpc.RaftServerProtocolService/appendEntries")
          .setRequestMarshaller(new Bytes())
          .setResponseMarshaller(new Bytes())
          .build();

  private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** An append from "n1" in term 0 (stale) to {@code target}, carrying {@code bytes} of data. */
  private byte[] append(String target, long index, int bytes) {
    return AppendEntriesRequestProto.newBuilder()
        .setServerRequest(
            RaftRpcRequestProto.newBuilder()
                .setRequestorId(
                    org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFromUtf8("n1"))
                .setReplyId(
                    org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFromUtf8(target))
                .setRaftGroupId(
                    org.apache.ratis.proto.RaftProtos.RaftGroupIdProto.newBuilder()
                        .setId(cluster.group().getGroupId().toByteString()))
                .setCallId(index))
        .setLeaderTerm(0)
        .addEntries(
            LogEntryProto.newBuilder()
                .setTerm(0)
                .setIndex(index)
                .setStateMachineLogEntry(
                    StateMachineLogEntryProto.newBuilder()
                        .setLogData(
                            org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(
                                new byte[bytes]))))
        .build()
        .toByteArray();
  }

  private void assertTheClusterCommits(String key) throws Exception {
    String leader = cluster.leader();
    KVGrpc.newBlockingStub(channels.to(cluster, leader))
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .put(
            PutRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFromUtf8("v"))
                .build());
    for (String id : cluster.running()) {
      assertThat(
              KVGrpc.newBlockingStub(channels.to(cluster, id))
                  .withDeadlineAfter(30, TimeUnit.SECONDS)
                  .get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).build())
                  .getFound())
          .as("%s has %s", id, key)
          .isTrue();
    }
  }

  @Test
  void oversizedAndEndlessAppendsFromAPeerCostTheNodeNeitherMemoryNorWrites() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    String leader = cluster.leader();
    String target = cluster.running().stream().filter(id -> !id.equals(leader)).findFirst().get();
    String raft = cluster.peer(target).raftAddress();
    long largest = HeapBudget.appendBytes(cluster.config(target));
    try (PeerChannels peer =
        new PeerChannels(PeerTls.load(cluster.tlsFiles("n1"), Instant.now()), 256 << 20)) {
      ManagedChannel ch = peer.to(raft);

      // One append 2 MiB larger than the largest the cluster makes: refused, naming the size.
      CompletableFuture<Status> refused = new CompletableFuture<>();
      ClientCall<byte[], byte[]> big = ch.newCall(APPEND, CallOptions.DEFAULT);
      big.start(
          new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
              refused.complete(status);
            }
          },
          new Metadata());
      big.request(1);
      big.sendMessage(append(target, 1, (int) largest + (2 << 20)));
      big.halfClose();
      Status s = refused.get(60, TimeUnit.SECONDS);
      assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertTheClusterCommits("after-oversized");

      // Appends of 8 MiB without end, no reply read: the sender is held back by flow control.
      AtomicLong replies = new AtomicLong();
      ClientCall<byte[], byte[]> flood = ch.newCall(APPEND, CallOptions.DEFAULT);
      flood.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
              replies.incrementAndGet();
            }
          },
          new Metadata());
      byte[] eight = append(target, 2, 8 << 20);
      long sent = 0;
      long messages = 0;
      int heldBack = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline && sent < (4L << 30)) {
        if (flood.isReady()) {
          flood.sendMessage(eight);
          sent += eight.length;
          if (++messages % 32 == 0) {
            assertTheClusterCommits("during-flood-" + messages);
          }
        } else {
          heldBack++;
          TimeUnit.MILLISECONDS.sleep(1); // pacing the sender, not waiting for a condition
        }
      }
      System.out.printf(
          "flood: %d MiB sent in 20 s, the call not ready %d times, %d replies read%n",
          sent >> 20, heldBack, replies.get());
      assertThat(heldBack).as("flow control held the sender back").isPositive();
      assertTheClusterCommits("after-flood");
      flood.cancel("done", null);
    }
  }
}
