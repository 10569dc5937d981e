package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.StatusException;
import io.micrometer.core.instrument.Counter;
import io.shale.client.ErrorTrailers;
import io.shale.client.RequestIds;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Reply;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The way of a write from the API to the log: it gets a request id (the client's, or one assigned
 * here, so that no resend can apply twice), waits out the delay slow replicas ask for, goes through
 * group commit when it is a batch, and is answered within the call's deadline. A committed entry
 * the replicas rejected becomes INVALID_ARGUMENT ({@code REQUEST_REJECTED}).
 */
final class WritePath implements AutoCloseable {
  private final GroupCommit groupCommit;
  private final RaftSubmitter submitter;
  private final WriteAdmission pressure;
  private final StatusMapper statuses;
  private final Counter delayed;

  /**
   * @param pressure the replicas' write pressure (null: writes are never delayed here)
   * @param delayed counts writes delayed for a slow replica
   */
  WritePath(
      GroupCommit groupCommit,
      RaftSubmitter submitter,
      WriteAdmission pressure,
      StatusMapper statuses,
      Counter delayed) {
    this.groupCommit = groupCommit;
    this.submitter = submitter;
    this.pressure = pressure;
    this.statuses = statuses;
    this.delayed = delayed;
  }

  /**
   * Commits {@code command} under {@code requestId}, or under an id assigned here when the client
   * gave none, so that a resend (to a new leader, say) can never apply twice. Batches go through
   * group commit (several requests per log entry); other commands alone.
   */
  Reply write(ByteString requestId, Command command) throws StatusException {
    return write(requestId.isEmpty() ? newRequestId() : requestId.toByteArray(), command);
  }

  Reply write(byte[] requestId, Command command) throws StatusException {
    return RaftSubmitter.awaitReply(writeAsync(requestId, command), "write", true);
  }

  /** As {@link #write(ByteString, Command)}; the future fails with the gRPC status to answer. */
  CompletableFuture<Reply> writeAsync(ByteString requestId, Command command) {
    return writeAsync(requestId.isEmpty() ? newRequestId() : requestId.toByteArray(), command);
  }

  CompletableFuture<Reply> writeAsync(byte[] requestId, Command command) {
    Command c = new Command.Identified(requestId, command);
    CompletableFuture<Reply> reply;
    WriteAdmission.Decision d = pressure == null ? null : pressure.decide();
    if (d != null && d.refusal() != null) {
      return CompletableFuture.failedFuture(statuses.writeFailure(d.refusal()));
    }
    if (d == null || d.delay().isZero()) {
      reply = send(c, command);
    } else {
      // The delay a slow replica asks for, waited out without holding a thread; the leader checks
      // again, without waiting, before the write enters the log.
      delayed.increment();
      long nanos = Math.min(d.delay().toNanos(), CallRunner.remainingNanos());
      reply =
          CompletableFuture.runAsync(
                  () -> {}, CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS))
              .thenCompose(ignored -> send(c, command));
    }
    return reply.thenApply(
        r -> {
          if (r instanceof Reply.Rejected rejected) {
            throw new CompletionException(
                StatusMapper.limitExceeded(ErrorTrailers.REQUEST_REJECTED, rejected.message()));
          }
          if (r instanceof Reply.LeaseResult l
              && l.outcome() == Reply.LeaseOutcome.NOT_FOUND
              && !(command instanceof Command.LeaseKeepAlive)) {
            throw new CompletionException(StatusMapper.leaseNotFound(l.id()));
          }
          return r;
        });
  }

  /** Batches through group commit (several requests per log entry); other commands alone. */
  private CompletableFuture<Reply> send(Command identified, Command command) {
    if (command instanceof Command.Batch b) {
      int bytes = 16;
      for (Command.Op op : b.ops()) {
        bytes += 8 + op.key().length + (op.isDelete() ? 0 : op.value().length);
      }
      return groupCommit.submit(identified, bytes);
    }
    return submitter.writeAsync(identified);
  }

  /** Ids the server assigns start with 's', told apart from the SDK's in the records. */
  private static final RequestIds SERVER_IDS = RequestIds.tagged((byte) 's');

  static byte[] newRequestId() {
    return SERVER_IDS.next();
  }

  /**
   * The request id of the {@code k}-th entry of one delete-range call: the call's own for the
   * first, then derived from it, so that a retried call retries the same entries.
   */
  static byte[] chunkId(byte[] requestId, int k) {
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

  /** Fails writes still waiting to be grouped. */
  @Override
  public void close() {
    groupCommit.close();
  }
}
