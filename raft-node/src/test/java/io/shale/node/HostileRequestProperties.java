package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.Compare;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.DeleteRangeRequest;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyRange;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.TxnOp;
import io.shale.client.proto.TxnRequest;
import io.shale.client.proto.TxnResponse;
import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.node.local.LocalCluster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Random, malformed and oversized requests through the real gRPC API of a real 3-node cluster:
 * every one is answered within its deadline with OK or a status that names why (never INTERNAL,
 * UNKNOWN or a hang), every acknowledged write reads back, no node stops, and when it is over every
 * replica holds the same data.
 */
class HostileRequestProperties {
  private static final Set<Status.Code> REFUSALS =
      Set.of(
          Status.Code.INVALID_ARGUMENT, Status.Code.RESOURCE_EXHAUSTED, Status.Code.OUT_OF_RANGE);

  private static LocalCluster cluster;
  private static ApiChannels channels;
  private static List<ManagedChannel> nodes;

  @BeforeContainer
  static void start() throws Exception {
    cluster = new LocalCluster(Files.createTempDirectory("hostile"), 3);
    cluster.leader();
    channels = new ApiChannels();
    nodes = cluster.running().stream().map(id -> channels.to(cluster, id)).toList();
  }

  @AfterContainer
  static void stop() throws Exception {
    try {
      assertThat(cluster.running()).hasSize(3);
      assertReplicasAgree();
    } finally {
      channels.close();
      cluster.close();
    }
  }

  private static KVGrpc.KVBlockingStub kv(int node) {
    return KVGrpc.newBlockingStub(nodes.get(Math.floorMod(node, nodes.size())))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  // ----------------------------------------------------------------------------------------------
  // Well-formed protobuf, hostile content.

  @Property(tries = 150)
  void anyRequestIsAnsweredAndEveryAcknowledgedWriteReadsBack(
      @ForAll("requests") Object request, @ForAll("nodes") int node) {
    Object response;
    try {
      response = send(kv(node), request);
    } catch (StatusRuntimeException e) {
      Statistics.collect(request.getClass().getSimpleName(), e.getStatus().getCode());
      assertRefusalNamesItsReason(request, e);
      return;
    }
    Statistics.collect(request.getClass().getSimpleName(), Status.Code.OK);
    assertAcknowledgedWriteReadsBack(request, response);
  }

  /**
   * A request id reused with another payload is refused by name, and a retry of the same payload
   * gets the first answer (the same index), on any node.
   */
  @Property(tries = 20)
  void aRequestIdBindsItsPayload(
      @ForAll("keys") byte[] key,
      @ForAll("values") byte[] value,
      @ForAll("nodes") int first,
      @ForAll("nodes") int second) {
    if (!validKey(key) || value.length > 1 << 20) {
      return;
    }
    ByteString id = ByteString.copyFrom(randomBytes(16));
    PutRequest put =
        PutRequest.newBuilder()
            .setKey(ByteString.copyFrom(key))
            .setValue(ByteString.copyFrom(value))
            .setRequestId(id)
            .build();
    long index = kv(first).put(put).getHeader().getAppliedIndex();
    assertThat(kv(second).put(put).getHeader().getAppliedIndex()).isEqualTo(index);
    PutRequest other = put.toBuilder().setValue(ByteString.copyFromUtf8("other")).build();
    try {
      kv(second).put(other);
      throw new AssertionError("a reused request id with another payload was accepted");
    } catch (StatusRuntimeException e) {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(trailer(e)).isEqualTo(ErrorTrailers.REQUEST_REJECTED);
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Not protobuf at all: the same methods sent random bytes.

  @Property(tries = 60)
  void garbageBytesAreRefusedAndTheNodeServesOn(
      @ForAll("methods") String method, @ForAll("garbage") byte[] body, @ForAll("nodes") int node) {
    MethodDescriptor<byte[], byte[]> raw =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("shale.v1.KV", method))
            .setRequestMarshaller(RAW)
            .setResponseMarshaller(RAW)
            .build();
    try {
      ClientCalls.blockingUnaryCall(
          nodes.get(Math.floorMod(node, nodes.size())),
          raw,
          CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS),
          body);
    } catch (StatusRuntimeException e) {
      if (parses(method, body)) {
        // Bytes that happen to be a valid message go to the node's code like any request.
        assertThat(REFUSALS)
            .as("%s of %d random bytes that parse: %s", method, body.length, e.getStatus())
            .contains(e.getStatus().getCode());
      } else {
        // gRPC itself refuses bytes it cannot parse, before any of the node's code runs (as
        // UNKNOWN "Application error processing RPC" in this gRPC version).
        assertThat(e.getStatus().getCode())
            .as("%s of %d unparsable bytes: %s", method, body.length, e.getStatus())
            .isIn(Status.Code.UNKNOWN, Status.Code.INTERNAL);
      }
    }
    // Whatever it made of them, the node still answers.
    assertThat(
            kv(node)
                .get(
                    GetRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8("still/serving"))
                        .setConsistency(Consistency.STALE)
                        .build())
                .getFound())
        .isFalse();
  }

  // ----------------------------------------------------------------------------------------------

  /** Whether {@code body} is a valid request message of {@code method}. */
  private static boolean parses(String method, byte[] body) {
    try {
      switch (method) {
        case "Get" -> GetRequest.parseFrom(body);
        case "Put" -> PutRequest.parseFrom(body);
        case "Delete" -> DeleteRequest.parseFrom(body);
        case "DeleteRange" -> DeleteRangeRequest.parseFrom(body);
        case "Scan" -> ScanRequest.parseFrom(body);
        case "Batch" -> BatchRequest.parseFrom(body);
        case "CompareAndSet" -> CompareAndSetRequest.parseFrom(body);
        case "Txn" -> TxnRequest.parseFrom(body);
        default -> throw new IllegalArgumentException(method);
      }
      return true;
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
  }

  private static Object send(KVGrpc.KVBlockingStub kv, Object request) {
    if (request instanceof GetRequest r) {
      return kv.get(r);
    } else if (request instanceof PutRequest r) {
      return kv.put(r);
    } else if (request instanceof DeleteRequest r) {
      return kv.delete(r);
    } else if (request instanceof DeleteRangeRequest r) {
      return kv.deleteRange(r);
    } else if (request instanceof ScanRequest r) {
      return kv.scan(r);
    } else if (request instanceof BatchRequest r) {
      return kv.batch(r);
    } else if (request instanceof CompareAndSetRequest r) {
      return kv.compareAndSet(r);
    } else if (request instanceof TxnRequest r) {
      return kv.txn(r);
    }
    throw new IllegalArgumentException(String.valueOf(request));
  }

  private static void assertRefusalNamesItsReason(Object request, StatusRuntimeException e) {
    Status s = e.getStatus();
    assertThat(REFUSALS).as("%s answered %s", describe(request), s).contains(s.getCode());
    assertThat(s.getDescription()).as("%s: a refusal says why", describe(request)).isNotBlank();
  }

  /** After an OK write, a linearizable read (from any node) sees it. */
  private static void assertAcknowledgedWriteReadsBack(Object request, Object response) {
    Map<ByteString, ByteString> expected = new LinkedHashMap<>(); // null: absent
    if (request instanceof PutRequest r) {
      expected.put(r.getKey(), r.getValue());
    } else if (request instanceof DeleteRequest r) {
      expected.put(r.getKey(), null);
    } else if (request instanceof BatchRequest r) {
      for (Op op : r.getOpsList()) {
        if (op.hasPut()) {
          expected.put(op.getPut().getKey(), op.getPut().getValue());
        } else {
          expected.put(op.getDelete(), null);
        }
      }
    } else if (request instanceof CompareAndSetRequest r
        && ((CompareAndSetResponse) response).getApplied()) {
      Op op = r.getThen();
      expected.put(
          op.hasPut() ? op.getPut().getKey() : op.getDelete(),
          op.hasPut() ? op.getPut().getValue() : null);
    } else if (request instanceof TxnRequest r) {
      List<TxnOp> branch =
          ((TxnResponse) response).getSucceeded() ? r.getThenList() : r.getOtherwiseList();
      if (branch.stream().noneMatch(TxnOp::hasDeleteRange)) {
        for (TxnOp op : branch) {
          if (op.hasPut()) {
            expected.put(op.getPut().getKey(), op.getPut().getValue());
          } else if (op.hasDelete()) {
            expected.put(op.getDelete(), null);
          }
        }
      }
    }
    // Reads need nothing here, nor DeleteRange (its range may hold other keys): the replicas'
    // agreement at the end covers them.
    for (Map.Entry<ByteString, ByteString> e : expected.entrySet()) {
      GetResponse got = kv(0).get(GetRequest.newBuilder().setKey(e.getKey()).build());
      if (e.getValue() == null) {
        assertThat(got.getFound()).as("%s then get", describe(request)).isFalse();
      } else {
        assertThat(got.getValue()).as("%s then get", describe(request)).isEqualTo(e.getValue());
      }
    }
  }

  private static String trailer(StatusRuntimeException e) {
    Metadata t = e.getTrailers();
    return t == null ? null : t.get(ErrorTrailers.ERROR);
  }

  private static String describe(Object request) {
    String s = request.getClass().getSimpleName() + " " + request.toString().replace('\n', ' ');
    return s.length() > 300 ? s.substring(0, 300) + "..." : s;
  }

  /** Every replica's content (clients' keys and the node's own records) hashes the same. */
  private static void assertReplicasAgree() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      List<String> hashes = new ArrayList<>();
      for (String id : cluster.running()) {
        hashes.add(contentHash(cluster.node(id).stateMachine().engine()));
      }
      if (hashes.stream().distinct().count() == 1) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("replicas differ after 30 s: " + hashes);
      }
      Thread.sleep(100);
    }
  }

  private static String contentHash(Engine e) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    long n = 0;
    // Clients' keys only: they all start above byte 0.
    try (ScanIterator it = e.scan(ScanOptions.range(new byte[] {1}, null))) {
      for (; it.next(); n++) {
        sha.update(it.key());
        sha.update((byte) 0);
        sha.update(it.value());
      }
    }
    return n + ":" + HexFormat.of().formatHex(sha.digest());
  }

  // ----------------------------------------------------------------------------------------------
  // Generators.

  @Provide
  Arbitrary<Integer> nodes() {
    return Arbitraries.integers().between(0, 2);
  }

  @Provide
  Arbitrary<byte[]> keys() {
    return Arbitraries.<byte[]>frequencyOf(
        w(70, Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(40)),
        w(8, Arbitraries.just(new byte[0])),
        w(
            10,
            Arbitraries.bytes()
                .array(byte[].class)
                .ofMinSize(0)
                .ofMaxSize(20)
                .map(HostileRequestProperties::reserved)),
        w(4, Arbitraries.of((64 << 10), (64 << 10) + 1).map(byte[]::new)),
        w(8, Arbitraries.of("p/", "p0", "a", "z", "\u00ff").map(s -> s.getBytes())));
  }

  @Provide
  Arbitrary<byte[]> values() {
    return Arbitraries.<byte[]>frequencyOf(
        w(85, Arbitraries.bytes().array(byte[].class).ofMaxSize(300)),
        w(10, Arbitraries.integers().between(8 << 10, 64 << 10).map(byte[]::new)),
        w(2, Arbitraries.of((16 << 20) + 1).map(byte[]::new)));
  }

  @Provide
  Arbitrary<ByteString> requestIds() {
    return Arbitraries.<ByteString>frequencyOf(
        w(40, Arbitraries.just(ByteString.EMPTY)),
        w(50, Arbitraries.integers().between(1, 64).map(n -> ByteString.copyFrom(randomBytes(n)))),
        w(10, Arbitraries.just(0).map(n -> ByteString.copyFrom(randomBytes(65)))));
  }

  @Provide
  Arbitrary<String> methods() {
    return Arbitraries.of(
        "Get", "Put", "Delete", "DeleteRange", "Scan", "Batch", "CompareAndSet", "Txn");
  }

  @Provide
  Arbitrary<byte[]> garbage() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(2000);
  }

  @Provide
  Arbitrary<Object> requests() {
    Arbitrary<ByteString> key = keys().map(ByteString::copyFrom);
    Arbitrary<ByteString> value = values().map(ByteString::copyFrom);
    Arbitrary<Consistency> consistency =
        Arbitraries.of(Consistency.LINEARIZABLE, Consistency.STALE);
    Arbitrary<Op> op =
        Combinators.combine(key, value, Arbitraries.integers().between(0, 3))
            .as(
                (k, v, kind) ->
                    kind == 0
                        ? Op.newBuilder().setDelete(k).build()
                        : kind == 1
                            ? Op.getDefaultInstance() // neither put nor delete
                            : Op.newBuilder()
                                .setPut(KeyValue.newBuilder().setKey(k).setValue(v))
                                .build());
    Arbitrary<Object> get =
        Combinators.combine(key, consistency)
            .as((k, c) -> GetRequest.newBuilder().setKey(k).setConsistency(c).build());
    Arbitrary<Object> put =
        Combinators.combine(key, value, requestIds())
            .as(
                (k, v, id) ->
                    PutRequest.newBuilder().setKey(k).setValue(v).setRequestId(id).build());
    Arbitrary<Object> delete =
        Combinators.combine(key, requestIds())
            .as((k, id) -> DeleteRequest.newBuilder().setKey(k).setRequestId(id).build());
    Arbitrary<Object> deleteRange =
        Combinators.combine(key, key, requestIds())
            .as(
                (s, e, id) ->
                    DeleteRangeRequest.newBuilder().setStart(s).setEnd(e).setRequestId(id).build());
    Arbitrary<Integer> limit =
        Arbitraries.<Integer>frequencyOf(
            w(60, Arbitraries.integers().between(0, 20_000)),
            w(40, Arbitraries.integers())); // negative: 2^31 and above, unsigned
    Arbitrary<Object> scan =
        Combinators.combine(key, key, limit, Arbitraries.integers().between(0, 7), consistency)
            .as(
                (s, e, l, flags, c) ->
                    ScanRequest.newBuilder()
                        .setStart(s)
                        .setEnd(e)
                        .setLimit(l)
                        .setReverse((flags & 1) != 0)
                        .setKeysOnly((flags & 2) != 0)
                        .setConsistency(c)
                        .build());
    Arbitrary<Object> batch =
        Combinators.combine(
                op.list().ofMaxSize(20),
                Arbitraries.<Integer>frequencyOf(
                    w(90, Arbitraries.just(0)), w(10, Arbitraries.of(10_000, 10_001, 50_000))),
                requestIds())
            .as(
                (ops, extra, id) -> {
                  BatchRequest.Builder b = BatchRequest.newBuilder().addAllOps(ops);
                  for (int i = 0; i < extra; i++) {
                    b.addOps(Op.newBuilder().setDelete(ByteString.copyFrom(new byte[] {'x'})));
                  }
                  return b.setRequestId(id).build();
                });
    Arbitrary<Object> cas =
        Combinators.combine(
                key,
                value,
                Arbitraries.integers().between(0, 3),
                op,
                Arbitraries.integers().between(0, 3),
                requestIds())
            .as(
                (k, v, expect, other, thenKind, id) -> {
                  // Mostly an op on the same key (else refused), sometimes any op at all.
                  Op then =
                      switch (thenKind) {
                        case 0 -> Op.newBuilder().setDelete(k).build();
                        case 1 -> other;
                        default ->
                            Op.newBuilder()
                                .setPut(KeyValue.newBuilder().setKey(k).setValue(v))
                                .build();
                      };
                  CompareAndSetRequest.Builder b =
                      CompareAndSetRequest.newBuilder().setKey(k).setThen(then).setRequestId(id);
                  switch (expect) {
                    case 0 -> b.setExpectedAbsent(true);
                    case 1 -> b.setExpectedValue(v);
                    case 2 -> b.setExpectedModIndex(v.size());
                    default -> {} // no expectation
                  }
                  return b.build();
                });
    Arbitrary<Compare> compare =
        Combinators.combine(
                key,
                Arbitraries.integers().between(0, 4), // 4: an unknown target
                Arbitraries.integers().between(0, 4), // 4: an unknown result
                Arbitraries.integers().between(0, 2), // the operand: none, a value, a number
                value,
                Arbitraries.longs()) // negative: 2^63 and above, unsigned
            .as(
                (k, target, result, operand, v, n) -> {
                  Compare.Builder c =
                      Compare.newBuilder().setKey(k).setTargetValue(target).setResultValue(result);
                  if (operand == 1) {
                    c.setValue(v);
                  } else if (operand == 2) {
                    c.setNumber(n);
                  }
                  return c.build();
                });
    Arbitrary<TxnOp> txnOp =
        Combinators.combine(key, key, value, Arbitraries.integers().between(0, 4))
            .as(
                (k, e, v, kind) ->
                    switch (kind) {
                      case 0 ->
                          TxnOp.newBuilder()
                              .setPut(KeyValue.newBuilder().setKey(k).setValue(v))
                              .build();
                      case 1 -> TxnOp.newBuilder().setDelete(k).build();
                      case 2 ->
                          TxnOp.newBuilder()
                              .setDeleteRange(KeyRange.newBuilder().setStart(k).setEnd(e))
                              .build();
                      case 3 -> TxnOp.newBuilder().setGet(k).build();
                      default -> TxnOp.getDefaultInstance(); // no operation
                    });
    Arbitrary<Object> txn =
        Combinators.combine(
                compare.list().ofMaxSize(4),
                txnOp.list().ofMaxSize(6),
                txnOp.list().ofMaxSize(6),
                Arbitraries.<Integer>frequencyOf(
                    w(90, Arbitraries.just(0)), w(10, Arbitraries.of(128, 1_000, 5_000))),
                requestIds())
            .as(
                (cs, then, otherwise, extra, id) -> {
                  TxnRequest.Builder b =
                      TxnRequest.newBuilder()
                          .addAllCompares(cs)
                          .addAllThen(then)
                          .addAllOtherwise(otherwise);
                  for (int i = 0; i < extra; i++) {
                    b.addThen(TxnOp.newBuilder().setGet(ByteString.copyFromUtf8("x")));
                  }
                  return b.setRequestId(id).build();
                });
    return Arbitraries.oneOf(get, put, delete, deleteRange, scan, batch, cas, txn);
  }

  /** {@code tail} behind a 0 byte: a key in the node's reserved space. */
  private static byte[] reserved(byte[] tail) {
    byte[] k = new byte[tail.length + 1];
    System.arraycopy(tail, 0, k, 1, tail.length);
    return k;
  }

  private static boolean validKey(byte[] k) {
    return k.length > 0 && k.length <= (64 << 10) && k[0] != 0;
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(b);
    return b;
  }

  /** A weighted choice for {@link Arbitraries#frequencyOf}. */
  private static <T> Tuple.Tuple2<Integer, Arbitrary<? extends T>> w(
      int frequency, Arbitrary<? extends T> a) {
    return Tuple.of(frequency, a);
  }

  private static final MethodDescriptor.Marshaller<byte[]> RAW =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
      };
}
