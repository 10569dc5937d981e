package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.BatchResponse;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.DeleteRangeRequest;
import io.shale.client.proto.DeleteRangeResponse;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.DeleteResponse;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.PutResponse;
import io.shale.client.proto.ResponseHeader;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.ScanResponse;
import io.shale.client.proto.TxnOpResult;
import io.shale.client.proto.TxnRequest;
import io.shale.client.proto.TxnResponse;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.ratis.ForwardingClient;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Compare;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import io.shale.node.statemachine.ShaleStateMachine;
import io.shale.node.statemachine.TxnOp;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;

/**
 * The public KV API of one node. A write, or a linearizable read, sent to any node is forwarded by
 * the node's own Ratis client to the leader (Ratis finds it and follows leader changes), so clients
 * need not know the leader; a stale read is answered from this node's applied state. Every answer
 * carries this node's id and term and the applied index it reflects.
 *
 * <p>Errors: a malformed request (empty or reserved key, key over 64 KiB, value over the limit) is
 * INVALID_ARGUMENT naming what is wrong; a write Ratis could not commit is UNAVAILABLE; a throttled
 * write is RESOURCE_EXHAUSTED. {@link ErrorTrailers} carries the machine-readable reason beside
 * each.
 */
public final class KvService extends KVGrpc.KVImplBase implements AutoCloseable {
  private final RaftServer.Division division;
  private final RequestLimits limits;
  private final RaftSubmitter submitter;
  private final WritePath writes;
  private final CallRunner calls;

  /** Where Ratis's replies are taken up and answered (two: answering a group is work). */
  private final java.util.concurrent.ExecutorService replyThreads;

  /**
   * @param limits what a request may hold; beyond it is INVALID_ARGUMENT naming the limit
   * @param registry where refused, delayed and failed requests are counted
   * @param pressure the replicas' write pressure, applied before a write leaves (null: none)
   * @param followerReads whether this node answers linearizable reads as a follower too (after a
   *     read index from the leader) rather than sending them to the leader
   */
  public KvService(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      ForwardingClient raft,
      RequestLimits limits,
      MeterRegistry registry,
      GroupCommit.Bounds grouping,
      CallRunner.Admission admission,
      WriteAdmission pressure,
      boolean followerReads) {
    String node = division.getId().toString();
    StatusMapper statuses = new StatusMapper(node, registry);
    this.division = division;
    this.limits = limits;
    this.replyThreads =
        java.util.concurrent.Executors.newFixedThreadPool(
            2, io.shale.engine.concurrent.DaemonThreads.numbered(node + "-replies"));
    this.submitter =
        new RaftSubmitter(division, stateMachine, raft, statuses, followerReads, replyThreads);
    this.writes =
        new WritePath(
            new GroupCommit(node, grouping, submitter::writeAsync, registry),
            submitter,
            pressure,
            statuses,
            registry.counter("shale.writes.delayed", "node", node));
    this.calls = new CallRunner(node, admission, statuses, registry);
  }

  /**
   * Completes once this node has applied every entry the leader had committed when called: a
   * linearizable read of something small (this node's write pressure), through this node's own read
   * index when it may serve one.
   */
  public CompletableFuture<?> caughtUp() {
    return submitter.readAsync(new Query.Pressure(), false);
  }

  /**
   * The Lease API, sharing this service's write path and handlers.
   *
   * @param minTtl the shortest TTL a grant may ask for ({@code lease.min_ttl})
   * @param maxTtl the longest ({@code lease.max_ttl})
   * @param auth users and roles, to decide who may revoke a lease
   */
  public LeaseService leases(
      java.time.Duration minTtl,
      java.time.Duration maxTtl,
      java.util.function.Supplier<io.shale.node.auth.AuthState> auth) {
    return new LeaseService(division, writes, submitter, calls, minTtl, maxTtl, auth);
  }

  /**
   * {@code service} with each request counted against this node's in-flight limit from the moment
   * its message has arrived, before it is parsed ({@link ArrivalGate}).
   *
   * @param largestMessage the largest message the API port accepts
   */
  public io.grpc.ServerServiceDefinition admittedOnArrival(
      io.grpc.ServerServiceDefinition service, int largestMessage) {
    return calls.arrivals(largestMessage).guard(service);
  }

  /** Fails writes still waiting to be grouped and stops the handlers. */
  @Override
  public void close() {
    writes.close();
    calls.close();
    replyThreads.shutdown();
  }

  private ResponseHeader header(long appliedIndex) {
    return ResponseHeaders.of(division, appliedIndex);
  }

  private CompletableFuture<Reply> read(Query q, Consistency consistency) {
    return submitter.readAsync(q, consistency == Consistency.STALE);
  }

  @Override
  public void get(GetRequest req, StreamObserver<GetResponse> out) {
    calls.serveAsync(
        out,
        req,
        "read",
        false,
        () ->
            read(new Query.Get(limits.key(req.getKey())), req.getConsistency())
                .thenApply(
                    r -> {
                      Reply.Value v = (Reply.Value) r;
                      GetResponse.Builder b =
                          GetResponse.newBuilder().setHeader(header(v.appliedIndex()));
                      if (v.value() != null) {
                        b.setFound(true)
                            .setValue(ByteString.copyFrom(v.value()))
                            .setModIndex(v.modIndex())
                            .setCreateIndex(v.createIndex())
                            .setVersion(v.version());
                      }
                      return b.build();
                    }));
  }

  @Override
  public void put(PutRequest req, StreamObserver<PutResponse> out) {
    writeBatch(
        out,
        req,
        req.getRequestId(),
        () ->
            List.of(
                new Command.Op(
                    limits.key(req.getKey()),
                    limits.value(req.getValue()),
                    RequestLimits.lease(req.getLease()))),
        h -> PutResponse.newBuilder().setHeader(h).build());
  }

  @Override
  public void delete(DeleteRequest req, StreamObserver<DeleteResponse> out) {
    writeBatch(
        out,
        req,
        req.getRequestId(),
        () -> List.of(new Command.Op(limits.key(req.getKey()), null)),
        h -> DeleteResponse.newBuilder().setHeader(h).build());
  }

  /** Operations of a request, validated when the call starts (a limit throws). */
  @FunctionalInterface
  private interface Ops {
    List<Command.Op> get();
  }

  /** Serves a request that is one batch of {@code ops}, answered with the applied header. */
  private <T> void writeBatch(
      StreamObserver<T> out,
      com.google.protobuf.MessageLite req,
      ByteString requestId,
      Ops ops,
      java.util.function.Function<ResponseHeader, T> response) {
    calls.serveAsync(
        out,
        req,
        "write",
        true,
        () ->
            writes
                .writeAsync(requestId, new Command.Batch(ops.get()))
                .thenApply(r -> response.apply(header(r.appliedIndex()))));
  }

  /**
   * Deletes the range one bounded entry after another, while the call's deadline leaves time for
   * another entry (at most a few seconds in all); then answers where to resume.
   */
  @Override
  public void deleteRange(DeleteRangeRequest req, StreamObserver<DeleteRangeResponse> out) {
    calls.serve(
        out,
        req,
        () -> {
          byte[] start = req.getStart().toByteArray();
          if (start.length > 0) {
            limits.key(req.getStart());
          }
          byte[] end = RequestLimits.rangeEnd(start, req.getEnd());
          byte[] requestId =
              req.getRequestId().isEmpty()
                  ? WritePath.newRequestId()
                  : req.getRequestId().toByteArray();
          long budgetNanos = deleteRangeBudgetNanos();
          long began = System.nanoTime();
          long deleted = 0;
          Reply.RangeDeleted r;
          int k = 0;
          do {
            r =
                (Reply.RangeDeleted)
                    writes.write(
                        WritePath.chunkId(requestId, k++),
                        new Command.DeleteRange(start, end, limits.deleteRangeChunkKeys()));
            deleted += r.deleted();
            start = r.resumeFrom();
          } while (start != null && System.nanoTime() - began < budgetNanos);
          DeleteRangeResponse.Builder b =
              DeleteRangeResponse.newBuilder()
                  .setHeader(header(r.appliedIndex()))
                  .setDeleted(deleted)
                  .setMore(start != null);
          if (start != null) {
            b.setResumeFrom(ByteString.copyFrom(start));
          }
          return b.build();
        });
  }

  /** Time a delete-range call may keep adding entries: half its deadline, at most 2 s. */
  private static long deleteRangeBudgetNanos() {
    long max = TimeUnit.SECONDS.toNanos(2);
    Deadline d = Context.current().getDeadline();
    return d == null ? max : Math.min(max, d.timeRemaining(TimeUnit.NANOSECONDS) / 2);
  }

  @Override
  public void batch(BatchRequest req, StreamObserver<BatchResponse> out) {
    writeBatch(
        out,
        req,
        req.getRequestId(),
        () -> {
          limits.batchSize(req.getOpsCount());
          List<Command.Op> ops = new ArrayList<>(req.getOpsCount());
          for (Op op : req.getOpsList()) {
            ops.add(limits.op(op));
          }
          return ops;
        },
        h -> BatchResponse.newBuilder().setHeader(h).build());
  }

  @Override
  public void compareAndSet(CompareAndSetRequest req, StreamObserver<CompareAndSetResponse> out) {
    calls.serveAsync(
        out,
        req,
        "write",
        true,
        () -> {
          byte[] key = limits.key(req.getKey());
          byte[] expected =
              switch (req.getExpectationCase()) {
                case EXPECTED_VALUE -> req.getExpectedValue().toByteArray();
                case EXPECTED_ABSENT, EXPECTED_MOD_INDEX -> null;
                case EXPECTATION_NOT_SET ->
                    throw new IllegalArgumentException(
                        "compare-and-set needs expected_value, expected_absent or expected_mod_index");
              };
          long expectedIndex =
              req.getExpectationCase() == CompareAndSetRequest.ExpectationCase.EXPECTED_MOD_INDEX
                  ? req.getExpectedModIndex()
                  : -1;
          Command.Op then = limits.op(req.getThen());
          if (!java.util.Arrays.equals(then.key(), key)) {
            throw new IllegalArgumentException(
                "compare-and-set's operation must be on its own key");
          }
          return writes
              .writeAsync(
                  req.getRequestId(), new Command.CompareAndSet(key, expected, expectedIndex, then))
              .thenApply(
                  reply -> {
                    Reply.CasResult r = (Reply.CasResult) reply;
                    CompareAndSetResponse.Builder b =
                        CompareAndSetResponse.newBuilder()
                            .setHeader(header(r.appliedIndex()))
                            .setApplied(r.applied());
                    if (r.current() != null) {
                      b.setFound(true)
                          .setCurrent(ByteString.copyFrom(r.current()))
                          .setModIndex(r.modIndex());
                    }
                    return b.build();
                  });
        });
  }

  @Override
  public void txn(TxnRequest req, StreamObserver<TxnResponse> out) {
    calls.serveAsync(
        out,
        req,
        "write",
        true,
        () -> {
          limits.txnSize(req.getComparesCount() + req.getThenCount() + req.getOtherwiseCount());
          List<Compare> compares = new ArrayList<>(req.getComparesCount());
          for (io.shale.client.proto.Compare c : req.getComparesList()) {
            compares.add(limits.compare(c));
          }
          List<TxnOp> then = new ArrayList<>(req.getThenCount());
          for (io.shale.client.proto.TxnOp op : req.getThenList()) {
            then.add(limits.txnOp(op));
          }
          List<TxnOp> otherwise = new ArrayList<>(req.getOtherwiseCount());
          for (io.shale.client.proto.TxnOp op : req.getOtherwiseList()) {
            otherwise.add(limits.txnOp(op));
          }
          return writes
              .writeAsync(req.getRequestId(), new Command.Txn(compares, then, otherwise))
              .thenApply(reply -> txnResponse((Reply.TxnResult) reply));
        });
  }

  private TxnResponse txnResponse(Reply.TxnResult r) {
    TxnResponse.Builder b =
        TxnResponse.newBuilder().setHeader(header(r.appliedIndex())).setSucceeded(r.succeeded());
    for (Reply.OpResult o : r.results()) {
      TxnOpResult.Builder ob = TxnOpResult.newBuilder().setDeleted(o.deleted());
      if (o.key() != null) {
        ob.setKey(ByteString.copyFrom(o.key()));
      }
      if (o.value() != null) {
        ob.setFound(true)
            .setValue(ByteString.copyFrom(o.value()))
            .setModIndex(o.modIndex())
            .setCreateIndex(o.createIndex())
            .setVersion(o.version());
      }
      b.addResults(ob);
    }
    return b.build();
  }

  @Override
  public void scan(ScanRequest req, StreamObserver<ScanResponse> out) {
    calls.serve(
        out,
        req,
        () -> {
          int limit = limits.scanLimit(req.getLimit());
          byte[] end = req.getEnd().isEmpty() ? null : req.getEnd().toByteArray();
          Reply.Entries r =
              (Reply.Entries)
                  RaftSubmitter.awaitReply(
                      read(
                          new Query.Scan(
                              req.getStart().toByteArray(),
                              end,
                              limit,
                              req.getReverse(),
                              req.getKeysOnly()),
                          req.getConsistency()),
                      "read",
                      false);
          ScanResponse.Builder b =
              ScanResponse.newBuilder().setHeader(header(r.appliedIndex())).setMore(r.more());
          for (byte[][] kv : r.entries()) {
            b.addEntries(
                KeyValue.newBuilder()
                    .setKey(ByteString.copyFrom(kv[0]))
                    .setValue(ByteString.copyFrom(kv[1])));
          }
          return b.build();
        });
  }
}
