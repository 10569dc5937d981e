package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.DeleteRangeRequest;
import io.shale.client.proto.DeleteRangeResponse;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.PutResponse;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.ScanResponse;
import io.shale.node.local.LocalCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gRPC KV API of a real 3-node cluster, called on followers and leader alike. */
class KvApiTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private final Map<String, ManagedChannel> channels = new HashMap<>();

  @BeforeEach
  void start() throws Exception {
    cluster = new LocalCluster(dir, 3);
    cluster.leader();
  }

  @AfterEach
  void stop() throws IOException {
    channels.values().forEach(ManagedChannel::shutdownNow);
    cluster.close();
  }

  private KVGrpc.KVBlockingStub kv(String node) {
    ManagedChannel ch =
        channels.computeIfAbsent(
            node,
            n ->
                NettyChannelBuilder.forAddress("127.0.0.1", cluster.node(n).apiPort())
                    .usePlaintext()
                    .maxInboundMessageSize(32 << 20)
                    .build());
    return KVGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private String follower() throws InterruptedException {
    String leader = cluster.leader();
    return cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
  }

  private static ByteString s(String v) {
    return ByteString.copyFromUtf8(v);
  }

  @Test
  void everyOperationWorksThroughAFollower() throws Exception {
    String f = follower();
    PutResponse put = kv(f).put(PutRequest.newBuilder().setKey(s("a")).setValue(s("1")).build());
    assertThat(put.getHeader().getNodeId()).isEqualTo(f);
    assertThat(put.getHeader().getAppliedIndex()).isPositive();
    assertThat(put.getHeader().getTerm()).isPositive();

    for (String n : cluster.running()) {
      GetResponse g = kv(n).get(GetRequest.newBuilder().setKey(s("a")).build());
      assertThat(g.getFound()).as(n).isTrue();
      assertThat(g.getValue().toStringUtf8()).isEqualTo("1");
      assertThat(g.getHeader().getAppliedIndex())
          .isGreaterThanOrEqualTo(put.getHeader().getAppliedIndex());
    }

    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      ops.add(
          Op.newBuilder()
              .setPut(
                  KeyValue.newBuilder().setKey(s(String.format("s%02d", i))).setValue(s("v" + i)))
              .build());
    }
    ops.add(Op.newBuilder().setDelete(s("a")).build());
    kv(f).batch(BatchRequest.newBuilder().addAllOps(ops).build());
    assertThat(kv(f).get(GetRequest.newBuilder().setKey(s("a")).build()).getFound()).isFalse();

    // Paging with a continuation key: 25 keys in pages of 10.
    List<String> seen = new ArrayList<>();
    ByteString start = s("s");
    while (true) {
      ScanResponse page =
          kv(f).scan(ScanRequest.newBuilder().setStart(start).setEnd(s("t")).setLimit(10).build());
      page.getEntriesList().forEach(e -> seen.add(e.getKey().toStringUtf8()));
      if (!page.getMore()) {
        break;
      }
      start =
          page.getEntries(page.getEntriesCount() - 1)
              .getKey()
              .concat(ByteString.copyFrom(new byte[] {0}));
    }
    assertThat(seen).hasSize(25).startsWith("s00", "s01").endsWith("s24");
    ScanResponse reverse =
        kv(f)
            .scan(
                ScanRequest.newBuilder()
                    .setStart(s("s"))
                    .setEnd(s("t"))
                    .setLimit(3)
                    .setReverse(true)
                    .setKeysOnly(true)
                    .build());
    assertThat(reverse.getEntriesList())
        .extracting(e -> e.getKey().toStringUtf8())
        .containsExactly("s24", "s23", "s22");

    // Compare-and-set.
    CompareAndSetResponse lost =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("s01"))
                    .setExpectedValue(s("wrong"))
                    .setThen(
                        Op.newBuilder()
                            .setPut(KeyValue.newBuilder().setKey(s("s01")).setValue(s("x"))))
                    .build());
    assertThat(lost.getApplied()).isFalse();
    assertThat(lost.getCurrent().toStringUtf8()).isEqualTo("v1");
    CompareAndSetResponse won =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("s01"))
                    .setExpectedValue(s("v1"))
                    .setThen(Op.newBuilder().setDelete(s("s01")))
                    .build());
    assertThat(won.getApplied()).isTrue();
    assertThat(won.getFound()).isFalse();
    CompareAndSetResponse created =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("s01"))
                    .setExpectedAbsent(true)
                    .setThen(
                        Op.newBuilder()
                            .setPut(KeyValue.newBuilder().setKey(s("s01")).setValue(s("again"))))
                    .build());
    assertThat(created.getApplied()).isTrue();

    // Compare-and-set on the modification index (etcd's mod_revision): the put's index.
    GetResponse versioned = kv(f).get(GetRequest.newBuilder().setKey(s("s01")).build());
    assertThat(versioned.getModIndex()).isEqualTo(created.getModIndex()).isPositive();
    CompareAndSetResponse staleIndex =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("s01"))
                    .setExpectedModIndex(versioned.getModIndex() - 1)
                    .setThen(
                        Op.newBuilder()
                            .setPut(KeyValue.newBuilder().setKey(s("s01")).setValue(s("no"))))
                    .build());
    assertThat(staleIndex.getApplied()).isFalse();
    assertThat(staleIndex.getModIndex()).isEqualTo(versioned.getModIndex());
    CompareAndSetResponse byIndex =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("s01"))
                    .setExpectedModIndex(versioned.getModIndex())
                    .setThen(
                        Op.newBuilder()
                            .setPut(KeyValue.newBuilder().setKey(s("s01")).setValue(s("yes"))))
                    .build());
    assertThat(byIndex.getApplied()).isTrue();
    assertThat(byIndex.getModIndex()).isGreaterThan(versioned.getModIndex());
    assertThat(kv(f).get(GetRequest.newBuilder().setKey(s("s01")).build()).getModIndex())
        .isEqualTo(byIndex.getModIndex());
    CompareAndSetResponse absentByIndex =
        kv(f)
            .compareAndSet(
                CompareAndSetRequest.newBuilder()
                    .setKey(s("never"))
                    .setExpectedModIndex(0)
                    .setThen(
                        Op.newBuilder()
                            .setPut(KeyValue.newBuilder().setKey(s("never")).setValue(s("now"))))
                    .build());
    assertThat(absentByIndex.getApplied()).isTrue();

    // A stale read on a follower reflects its own applied index.
    GetResponse stale =
        kv(f)
            .get(
                GetRequest.newBuilder().setKey(s("s02")).setConsistency(Consistency.STALE).build());
    assertThat(stale.getHeader().getNodeId()).isEqualTo(f);
    kv(f).delete(DeleteRequest.newBuilder().setKey(s("s02")).build());
    // Delete a range: s10..s19 gone, s09 and s20 kept (25 keys, s02 deleted above: 14 left).
    kv(f).deleteRange(DeleteRangeRequest.newBuilder().setStart(s("s10")).setEnd(s("s20")).build());
    ScanResponse left =
        kv(f)
            .scan(
                ScanRequest.newBuilder().setStart(s("s")).setEnd(s("t")).setKeysOnly(true).build());
    assertThat(left.getEntriesList())
        .extracting(e -> e.getKey().toStringUtf8())
        .contains("s09", "s20")
        .doesNotContain("s02", "s10", "s15", "s19")
        .hasSize(14);
    assertThat(
            kv(cluster.leader()).get(GetRequest.newBuilder().setKey(s("s02")).build()).getFound())
        .isFalse();
  }

  /**
   * Followers answer linearizable reads themselves (a read index from the leader, then their own
   * applied state): a read that starts after a write was acknowledged, on any node, sees it.
   */
  @Test
  void everyNodeReadsEveryWriteAcknowledgedBeforeTheReadBegan() throws Exception {
    String leader = cluster.leader();
    List<String> followers = cluster.running().stream().filter(n -> !n.equals(leader)).toList();
    for (int i = 0; i < 200; i++) {
      ByteString key = ByteString.copyFromUtf8("read-your-write-" + (i % 7));
      ByteString value = ByteString.copyFromUtf8("v" + i);
      // Writes alternate between the leader and a follower (which forwards them).
      String writer = i % 2 == 0 ? leader : followers.get(0);
      PutResponse put = kv(writer).put(PutRequest.newBuilder().setKey(key).setValue(value).build());
      for (String reader : List.of(followers.get(i % 2), leader)) {
        GetResponse got = kv(reader).get(GetRequest.newBuilder().setKey(key).build());
        assertThat(got.getValue()).as("read %d on %s", i, reader).isEqualTo(value);
        assertThat(got.getHeader().getNodeId()).isEqualTo(reader);
        assertThat(got.getHeader().getAppliedIndex())
            .isGreaterThanOrEqualTo(put.getHeader().getAppliedIndex());
      }
    }
  }

  @Test
  void aWriteRetriedWithItsRequestIdIsAppliedOnceEvenThroughAnotherNode() throws Exception {
    String f = follower();
    String other = cluster.running().stream().filter(n -> !n.equals(f)).findFirst().orElseThrow();
    kv(f).put(PutRequest.newBuilder().setKey(s("counter")).setValue(s("1")).build());
    CompareAndSetRequest increment =
        CompareAndSetRequest.newBuilder()
            .setKey(s("counter"))
            .setExpectedValue(s("1"))
            .setThen(
                Op.newBuilder().setPut(KeyValue.newBuilder().setKey(s("counter")).setValue(s("2"))))
            .setRequestId(s("req-1"))
            .build();
    CompareAndSetResponse first = kv(f).compareAndSet(increment);
    assertThat(first.getApplied()).isTrue();
    // The "retry" (the client never saw the first answer), sent to another node: applied again,
    // it would fail its comparison (the value is now 2); deduplicated, it repeats the first answer.
    CompareAndSetResponse retry = kv(other).compareAndSet(increment);
    assertThat(retry.getApplied()).isTrue();
    assertThat(retry.getHeader().getAppliedIndex()).isEqualTo(first.getHeader().getAppliedIndex());
    assertThat(
            kv(f)
                .get(GetRequest.newBuilder().setKey(s("counter")).build())
                .getValue()
                .toStringUtf8())
        .isEqualTo("2");
    // A new id is a new write.
    CompareAndSetResponse fresh =
        kv(f).compareAndSet(increment.toBuilder().setRequestId(s("req-2")).build());
    assertThat(fresh.getApplied()).isFalse();
    assertThat(fresh.getCurrent().toStringUtf8()).isEqualTo("2");
    // Puts too: the retry does not overwrite what came after the first attempt.
    PutRequest put =
        PutRequest.newBuilder()
            .setKey(s("p"))
            .setValue(s("first"))
            .setRequestId(s("req-3"))
            .build();
    PutResponse p1 = kv(f).put(put);
    kv(f).put(PutRequest.newBuilder().setKey(s("p")).setValue(s("second")).build());
    PutResponse p2 = kv(other).put(put);
    assertThat(p2.getHeader().getAppliedIndex()).isEqualTo(p1.getHeader().getAppliedIndex());
    assertThat(kv(f).get(GetRequest.newBuilder().setKey(s("p")).build()).getValue().toStringUtf8())
        .isEqualTo("second");
  }

  @Test
  void badRequestsAreInvalidArgumentsNamingTheProblem() throws Exception {
    String f = follower();
    assertThatThrownBy(
            () ->
                kv(f)
                    .put(PutRequest.newBuilder().setKey(ByteString.EMPTY).setValue(s("v")).build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("key is empty");
            });
    assertThatThrownBy(
            () ->
                kv(f)
                    .put(
                        PutRequest.newBuilder()
                            .setKey(ByteString.copyFrom(new byte[(64 << 10) + 1]))
                            .setValue(s("v"))
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("exceeds the limit of 65536");
            });
    assertThatThrownBy(
            () ->
                kv(f)
                    .get(
                        GetRequest.newBuilder()
                            .setKey(ByteString.copyFrom(new byte[] {0, 't'}))
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getDescription()).contains("reserved"));
    assertThatThrownBy(
            () ->
                kv(f)
                    .put(
                        PutRequest.newBuilder()
                            .setKey(s("big"))
                            .setValue(ByteString.copyFrom(new byte[(16 << 20) + 1]))
                            .build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("exceeds the limit of 16777216");
            });
    assertThatThrownBy(
            () ->
                kv(f)
                    .deleteRange(
                        DeleteRangeRequest.newBuilder().setStart(s("z")).setEnd(s("a")).build()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("malformed range");
            });
    assertThatThrownBy(() -> kv(f).batch(BatchRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getDescription()).contains("at least one operation"));
  }

  /**
   * The largest value the limits allow goes through (Ratis refuses entries above its appender
   * buffer, 4 MB by default, unless the node raises it), and so do many concurrent 64 KiB values,
   * which group commit packs into shared entries.
   */
  @Test
  void theLargestValueAndConcurrentLargeValuesAreCommitted() throws Exception {
    byte[] largest = new byte[16 << 20];
    new java.util.Random(1).nextBytes(largest);
    String f = follower();
    kv(f)
        .put(
            PutRequest.newBuilder()
                .setKey(s("largest"))
                .setValue(ByteString.copyFrom(largest))
                .build());
    assertThat(
            kv(f)
                .get(GetRequest.newBuilder().setKey(s("largest")).build())
                .getValue()
                .toByteArray())
        .isEqualTo(largest);
    List<Thread> writers = new ArrayList<>();
    List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    String leader = cluster.leader();
    kv(leader); // opens the channel before the writers share it
    for (int t = 0; t < 64; t++) {
      int id = t;
      Thread w =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 3; i++) {
                    byte[] v = new byte[64 << 10];
                    java.util.Arrays.fill(v, (byte) (id * 3 + i));
                    kv(leader)
                        .put(
                            PutRequest.newBuilder()
                                .setKey(s("c" + id + "-" + i))
                                .setValue(ByteString.copyFrom(v))
                                .build());
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      w.start();
      writers.add(w);
    }
    for (Thread w : writers) {
      w.join();
    }
    assertThat(failures).isEmpty();
    byte[] expected = new byte[64 << 10];
    java.util.Arrays.fill(expected, (byte) (63 * 3 + 2));
    assertThat(
            kv(f).get(GetRequest.newBuilder().setKey(s("c63-2")).build()).getValue().toByteArray())
        .isEqualTo(expected);
  }

  private static void assertRefused(Runnable call, Status.Code code, String error, String text) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(code);
              assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(error);
              assertThat(e.getStatus().getDescription()).contains(text);
            });
  }

  @Test
  void capsOnBatchesScansAndRequestIdsAreEnforcedByName() throws Exception {
    String f = follower();
    BatchRequest.Builder tooMany = BatchRequest.newBuilder();
    for (int i = 0; i <= 10_000; i++) {
      tooMany.addOps(Op.newBuilder().setDelete(s("k" + i)));
    }
    assertRefused(
        () -> kv(f).batch(tooMany.build()),
        Status.Code.INVALID_ARGUMENT,
        ErrorTrailers.TOO_MANY_OPERATIONS,
        "limits.max_batch_ops");
    // uint32 2^31 arrives as a negative int: read as unsigned, it is over the cap, not an error.
    assertRefused(
        () -> kv(f).scan(ScanRequest.newBuilder().setStart(s("a")).setLimit(1 << 31).build()),
        Status.Code.INVALID_ARGUMENT,
        ErrorTrailers.SCAN_LIMIT_TOO_LARGE,
        "2147483648");
    PutRequest first =
        PutRequest.newBuilder().setKey(s("id")).setValue(s("1")).setRequestId(s("r-1")).build();
    kv(f).put(first);
    assertRefused(
        () -> kv(f).put(first.toBuilder().setValue(s("2")).build()),
        Status.Code.INVALID_ARGUMENT,
        ErrorTrailers.REQUEST_REJECTED,
        "request id already used");
    assertThat(kv(f).get(GetRequest.newBuilder().setKey(s("id")).build()).getValue().toStringUtf8())
        .isEqualTo("1");
  }

  /** A range larger than one entry's chunk is deleted in several bounded entries. */
  @Test
  void aLargeDeleteRangeGoesInBoundedEntriesAndPages() throws Exception {
    String f = follower();
    int n = 25_000;
    for (int i = 0; i < n; i += 5_000) {
      BatchRequest.Builder b = BatchRequest.newBuilder();
      for (int j = i; j < i + 5_000; j++) {
        b.addOps(
            Op.newBuilder()
                .setPut(
                    KeyValue.newBuilder().setKey(s(String.format("r/%06d", j))).setValue(s("v"))));
      }
      kv(f).batch(b.build());
    }
    long before =
        kv(f)
            .put(PutRequest.newBuilder().setKey(s("s/keep")).setValue(s("v")).build())
            .getHeader()
            .getAppliedIndex();
    DeleteRangeResponse r =
        kv(f)
            .deleteRange(DeleteRangeRequest.newBuilder().setStart(s("r/")).setEnd(s("r0")).build());
    long deleted = r.getDeleted();
    while (r.getMore()) {
      r =
          kv(f)
              .deleteRange(
                  DeleteRangeRequest.newBuilder()
                      .setStart(r.getResumeFrom())
                      .setEnd(s("r0"))
                      .build());
      deleted += r.getDeleted();
    }
    assertThat(deleted).isEqualTo(n);
    // At least three entries: none deleted more than limits.delete_range_chunk_keys (10,000).
    assertThat(r.getHeader().getAppliedIndex() - before).isGreaterThanOrEqualTo(3);
    ScanResponse left =
        kv(f)
            .scan(
                ScanRequest.newBuilder()
                    .setStart(s("r/"))
                    .setEnd(s("t"))
                    .setConsistency(Consistency.LINEARIZABLE)
                    .build());
    assertThat(left.getEntriesList())
        .extracting(e -> e.getKey().toStringUtf8())
        .containsExactly("s/keep");
  }
}
