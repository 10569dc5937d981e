package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusException;
import io.micrometer.core.instrument.Counter;
import io.shale.client.ErrorTrailers;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Reply;
import java.util.concurrent.ExecutionException;
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
    awaitPressure();
    Command c = new Command.Identified(requestId, command);
    Reply reply;
    if (command instanceof Command.Batch b) {
      int bytes = 16;
      for (Command.Op op : b.ops()) {
        bytes += 8 + op.key().length + (op.isDelete() ? 0 : op.value().length);
      }
      try {
        reply = CallRunner.awaitWithinDeadline(groupCommit.submit(c, bytes), "write", true);
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
    long nanos = Math.min(d.delay().toNanos(), CallRunner.remainingNanos());
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").asException();
    }
  }

  static byte[] newRequestId() {
    byte[] id = new byte[16];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(id);
    id[0] = 's'; // ids the server assigned are told apart from the SDK's in the records
    return id;
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
