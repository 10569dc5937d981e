package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusException;
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
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import io.shale.node.statemachine.ShaleStateMachine;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.client.RaftClient;
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
  private final StatusMapper statuses;
  private final RaftSubmitter submitter;
  private final GroupCommit groupCommit;
  private final InflightLimit inflight;
  private final WriteAdmission pressure;
  private final io.micrometer.core.instrument.Counter delayed;
  private final ExecutorService handlers;

  /**
   * @param limits what a request may hold; beyond it is INVALID_ARGUMENT naming the limit
   * @param registry where refused writes are counted ({@code shale.writes.throttled} by node and
   *     cause)
   */
  public KvService(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      RaftClient raft,
      RequestLimits limits,
      MeterRegistry registry,
      GroupCommit.Bounds grouping,
      Admission admission,
      WriteAdmission pressure) {
    this.pressure = pressure;
    this.delayed = registry.counter("shale.writes.delayed", "node", division.getId().toString());
    this.division = division;
    this.limits = limits;
    this.statuses = new StatusMapper(division.getId().toString(), registry);
    this.submitter = new RaftSubmitter(division, stateMachine, raft, statuses);
    this.groupCommit = new GroupCommit(division.getId().toString(), grouping, submitter::write);
    this.inflight =
        new InflightLimit(
            admission.maxRequests(),
            admission.maxWriteBytes(),
            registry,
            division.getId().toString());
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            admission.handlerThreads(),
            admission.handlerThreads(),
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(admission.maxRequests()),
            DaemonThreads.numbered(division.getId() + "-kv-handler-"));
    pool.allowCoreThreadTimeOut(true);
    this.handlers = pool;
  }

  /**
   * How much a node takes on at once ({@code limits.max_inflight_requests}, {@code
   * limits.max_inflight_write_bytes}, {@code limits.handler_threads}): requests beyond are
   * RESOURCE_EXHAUSTED with a retry-after, and at most {@code handlerThreads} wait on Raft at once.
   */
  public record Admission(int maxRequests, long maxWriteBytes, int handlerThreads) {
    public static Admission defaults() {
      return new Admission(1024, 64L << 20, 128);
    }
  }

  /** Fails writes still waiting to be grouped. */
  @Override
  public void close() {
    groupCommit.close();
    handlers.shutdownNow();
  }

  private ResponseHeader header(long appliedIndex) {
    return ResponseHeader.newBuilder()
        .setNodeId(division.getId().toString())
        .setTerm(division.getInfo().getCurrentTerm())
        .setAppliedIndex(appliedIndex)
        .build();
  }

  /**
   * Commits {@code command} under {@code requestId}, or under an id assigned here when the client
   * gave none, so that a resend (to a new leader, say) can never apply twice. Batches go through
   * group commit (several requests per log entry); other commands alone.
   */
  private Reply write(ByteString requestId, Command command) throws StatusException {
    return write(requestId.isEmpty() ? newRequestId() : requestId.toByteArray(), command);
  }

  private Reply write(byte[] requestId, Command command) throws StatusException {
    awaitPressure();
    Command c = new Command.Identified(requestId, command);
    Reply reply;
    if (command instanceof Command.Batch b) {
      int bytes = 16;
      for (Command.Op op : b.ops()) {
        bytes += 8 + op.key().length + (op.isDelete() ? 0 : op.value().length);
      }
      try {
        reply = groupCommit.submit(c, bytes).get(remainingNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withDescription("interrupted").asException();
      } catch (TimeoutException e) {
        throw Status.DEADLINE_EXCEEDED
            .withDescription(
                "no reply within the call's deadline; the write may still apply (retry with the"
                    + " same request id)")
            .asException();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof StatusException s) {
          throw s;
        }
        throw statuses.writeFailure(e.getCause() instanceof Exception x ? x : e);
      }
    } else {
      reply = submitter.write(c);
    }
    if (reply instanceof Reply.Rejected r) {
      throw StatusMapper.limitExceeded(ErrorTrailers.REQUEST_REJECTED, r.message());
    }
    return reply;
  }

  /**
   * Applies the replicas' write pressure before a write leaves: refused when no quorum can take
   * writes, else waits out the delay a slow replica asks for (on this handler thread, never on an
   * RPC thread of Ratis). The leader checks again, without waiting, before the write enters the
   * log.
   */
  private void awaitPressure() throws StatusException {
    if (pressure == null) {
      return;
    }
    WriteAdmission.Decision d = pressure.decide();
    if (d.refusal() != null) {
      throw statuses.writeFailure(d.refusal());
    }
    if (d.delay().isZero()) {
      return;
    }
    delayed.increment();
    long nanos = Math.min(d.delay().toNanos(), remainingNanos());
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").asException();
    }
  }

  private static byte[] newRequestId() {
    byte[] id = new byte[16];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(id);
    id[0] = 's'; // ids the server assigned are told apart from the SDK's in the records
    return id;
  }

  /**
   * The request id of the {@code k}-th entry of one delete-range call: the call's own for the
   * first, then derived from it, so that a retried call retries the same entries.
   */
  private static byte[] chunkId(byte[] requestId, int k) {
    if (k == 0) {
      return requestId;
    }
    try {
      java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
      sha.update(requestId);
      sha.update(java.nio.ByteBuffer.allocate(4).putInt(k).array());
      return sha.digest();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime provides SHA-256", e);
    }
  }

  private Reply read(Query q, Consistency consistency) throws IOException, StatusException {
    return submitter.read(q, consistency == Consistency.STALE);
  }

  /** Nanoseconds left before the call's deadline (a day when it has none). */
  private static long remainingNanos() {
    Deadline d = Context.current().getDeadline();
    return d == null
        ? TimeUnit.DAYS.toNanos(1)
        : Math.max(0, d.timeRemaining(TimeUnit.NANOSECONDS));
  }

  /**
   * Admits the request (refusing it when the node holds too much already), then runs {@code call}
   * on a handler thread, within the call's deadline, mapping its failures to gRPC statuses.
   */
  private <T> void serve(StreamObserver<T> out, com.google.protobuf.MessageLite req, Call<T> call) {
    InflightLimit.Permit permit = inflight.tryAcquire(req.getSerializedSize());
    if (permit == null) {
      out.onError(overloaded());
      return;
    }
    Context ctx = Context.current();
    try {
      handlers.execute(
          ctx.wrap(
              () -> {
                try (permit) {
                  Deadline d = ctx.getDeadline();
                  if (d != null && d.isExpired()) {
                    out.onError(
                        Status.DEADLINE_EXCEEDED
                            .withDescription("the deadline passed before a handler was free")
                            .asException());
                    return;
                  }
                  respond(out, call);
                }
              }));
    } catch (RejectedExecutionException full) {
      permit.close();
      out.onError(overloaded());
    }
  }

  private StatusException overloaded() {
    return StatusMapper.throttled(
        division.getId().toString(),
        "NODE_INFLIGHT_LIMIT",
        OVERLOAD_RETRY_AFTER_MS,
        "node "
            + division.getId()
            + " holds its limit of requests in flight ("
            + inflight.maxRequests()
            + " requests, limits.max_inflight_requests, or "
            + inflight.maxBytes()
            + " bytes of writes, limits.max_inflight_write_bytes); retry after "
            + OVERLOAD_RETRY_AFTER_MS
            + " ms");
  }

  /** How long a client refused for overload should wait before it retries. */
  private static final long OVERLOAD_RETRY_AFTER_MS = 50;

  private <T> void respond(StreamObserver<T> out, Call<T> call) {
    T response;
    try {
      response = call.run();
    } catch (RequestLimits.LimitExceeded bad) {
      out.onError(StatusMapper.limitExceeded(bad.error, bad.getMessage()));
      return;
    } catch (IllegalArgumentException bad) {
      out.onError(Status.INVALID_ARGUMENT.withDescription(bad.getMessage()).asException());
      return;
    } catch (StatusException s) {
      out.onError(s);
      return;
    } catch (IOException e) {
      out.onError(StatusMapper.unavailable(String.valueOf(e), e));
      return;
    } catch (RuntimeException e) {
      out.onError(statuses.internal(e));
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  @FunctionalInterface
  private interface Call<T> {
    T run() throws IOException, StatusException;
  }

  @Override
  public void get(GetRequest req, StreamObserver<GetResponse> out) {
    serve(
        out,
        req,
        () -> {
          Reply.Value v =
              (Reply.Value) read(new Query.Get(limits.key(req.getKey())), req.getConsistency());
          GetResponse.Builder b = GetResponse.newBuilder().setHeader(header(v.appliedIndex()));
          if (v.value() != null) {
            b.setFound(true).setValue(ByteString.copyFrom(v.value())).setModIndex(v.modIndex());
          }
          return b.build();
        });
  }

  @Override
  public void put(PutRequest req, StreamObserver<PutResponse> out) {
    serve(
        out,
        req,
        () -> {
          Reply r =
              write(
                  req.getRequestId(),
                  new Command.Batch(
                      List.of(
                          new Command.Op(limits.key(req.getKey()), limits.value(req.getValue())))));
          return PutResponse.newBuilder().setHeader(header(r.appliedIndex())).build();
        });
  }

  @Override
  public void delete(DeleteRequest req, StreamObserver<DeleteResponse> out) {
    serve(
        out,
        req,
        () -> {
          Reply r =
              write(
                  req.getRequestId(),
                  new Command.Batch(List.of(new Command.Op(limits.key(req.getKey()), null))));
          return DeleteResponse.newBuilder().setHeader(header(r.appliedIndex())).build();
        });
  }

  /**
   * Deletes the range one bounded entry after another, while the call's deadline leaves time for
   * another entry (at most a few seconds in all); then answers where to resume.
   */
  @Override
  public void deleteRange(DeleteRangeRequest req, StreamObserver<DeleteRangeResponse> out) {
    serve(
        out,
        req,
        () -> {
          byte[] start = req.getStart().toByteArray();
          if (start.length > 0) {
            limits.key(req.getStart());
          }
          byte[] end = RequestLimits.rangeEnd(start, req.getEnd());
          byte[] requestId =
              req.getRequestId().isEmpty() ? newRequestId() : req.getRequestId().toByteArray();
          long budgetNanos = deleteRangeBudgetNanos();
          long began = System.nanoTime();
          long deleted = 0;
          Reply.RangeDeleted r;
          int k = 0;
          do {
            r =
                (Reply.RangeDeleted)
                    write(
                        chunkId(requestId, k++),
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
    serve(
        out,
        req,
        () -> {
          limits.batchSize(req.getOpsCount());
          List<Command.Op> ops = new ArrayList<>(req.getOpsCount());
          for (Op op : req.getOpsList()) {
            ops.add(limits.op(op));
          }
          Reply r = write(req.getRequestId(), new Command.Batch(ops));
          return BatchResponse.newBuilder().setHeader(header(r.appliedIndex())).build();
        });
  }

  @Override
  public void compareAndSet(CompareAndSetRequest req, StreamObserver<CompareAndSetResponse> out) {
    serve(
        out,
        req,
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
          Reply.CasResult r =
              (Reply.CasResult)
                  write(
                      req.getRequestId(),
                      new Command.CompareAndSet(key, expected, expectedIndex, then));
          CompareAndSetResponse.Builder b =
              CompareAndSetResponse.newBuilder()
                  .setHeader(header(r.appliedIndex()))
                  .setApplied(r.applied());
          if (r.current() != null) {
            b.setFound(true).setCurrent(ByteString.copyFrom(r.current())).setModIndex(r.modIndex());
          }
          return b.build();
        });
  }

  @Override
  public void scan(ScanRequest req, StreamObserver<ScanResponse> out) {
    serve(
        out,
        req,
        () -> {
          int limit = limits.scanLimit(req.getLimit());
          byte[] end = req.getEnd().isEmpty() ? null : req.getEnd().toByteArray();
          Reply.Entries r =
              (Reply.Entries)
                  read(
                      new Query.Scan(
                          req.getStart().toByteArray(),
                          end,
                          limit,
                          req.getReverse(),
                          req.getKeysOnly()),
                      req.getConsistency());
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
