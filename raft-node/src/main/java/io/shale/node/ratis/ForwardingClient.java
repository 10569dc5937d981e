package io.shale.node.ratis;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.util.JavaUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis client a node sends requests to the leader through, replaced by a fresh one when Ratis
 * closes its ordered stream. A Ratis 3.3.0 client fails every later ordered (write) request with
 * {@link AlreadyClosedException} once one request has used up its retry policy or met an error it
 * does not retry ({@code OrderedAsync.handleException} fails the whole sliding window, and the
 * window never reopens). Without this, a node whose leader was unreachable for longer than the
 * retry policy (a majority down for ten seconds) would refuse every forwarded write until it
 * restarted. {@code ForwardingClientTest} shows both.
 *
 * <p>The request that meets the closed stream fails (the caller's client retries it with its
 * request id, which makes the resend apply once); the next one goes through the fresh client.
 * Requests still in flight on the old client end with it. Thread-safe.
 */
public final class ForwardingClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ForwardingClient.class);

  private final Supplier<RaftClient> build;
  private final AtomicReference<RaftClient> current;
  private final AtomicLong renewals = new AtomicLong();
  private volatile boolean closed;

  /** {@code build} makes each client: the first now, the next ones when a stream closes. */
  public ForwardingClient(Supplier<RaftClient> build) {
    this.build = build;
    this.current = new AtomicReference<>(build.get());
  }

  /** Sends a write, in order with this client's other writes, to the leader. */
  public CompletableFuture<RaftClientReply> send(Message message) {
    RaftClient c = current.get();
    return watch(c, c.async().send(message));
  }

  /**
   * Sends a linearizable read to the leader, outside the ordered stream: a failed read closes
   * nothing, so it never renews the client.
   */
  public CompletableFuture<RaftClientReply> sendReadOnly(Message message) {
    return current.get().async().sendReadOnlyUnordered(message);
  }

  /** How many times a closed stream made this client start over. */
  public long renewals() {
    return renewals.get();
  }

  private CompletableFuture<RaftClientReply> watch(
      RaftClient used, CompletableFuture<RaftClientReply> reply) {
    return reply.whenComplete(
        (r, e) -> {
          Throwable cause = e == null ? null : JavaUtils.unwrapCompletionException(e);
          if (cause != null && closesTheStream(cause)) {
            // Not on the thread that completed the reply: it may be one of the old client's
            // own, and closing that client waits for its channels to end.
            CompletableFuture.runAsync(() -> renew(used, cause));
          }
        });
  }

  /** The failures after which Ratis's ordered stream refuses every later request. */
  static boolean closesTheStream(Throwable cause) {
    return cause instanceof AlreadyClosedException
        || cause instanceof RaftRetryFailureException
        || cause instanceof GroupMismatchException
        || !(cause instanceof IOException);
  }

  private void renew(RaftClient failed, Throwable why) {
    if (closed || current.get() != failed) {
      return; // shutting down, or another failure renewed it already
    }
    RaftClient fresh = build.get();
    if (!current.compareAndSet(failed, fresh)) {
      closeQuietly(fresh);
      return;
    }
    renewals.incrementAndGet();
    LOG.warn(
        "the client to the leader closed its request stream ({}); a fresh client replaces it",
        why.toString());
    closeQuietly(failed);
    if (closed) { // close() may have run between the check and the swap
      closeQuietly(fresh);
    }
  }

  private static void closeQuietly(RaftClient c) {
    try {
      c.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing a replaced client", e);
    }
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(current.get());
  }
}
