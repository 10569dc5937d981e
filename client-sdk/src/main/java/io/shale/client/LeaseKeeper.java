package io.shale.client;

import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.LeaseGrpc;
import io.shale.client.proto.LeaseKeepAliveRequest;
import io.shale.client.proto.LeaseKeepAliveResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps one lease alive until closed ({@link Leases#keepAlive}): sends a keep-alive every third of
 * the TTL over a stream to one node, and opens a stream to the next node when that one fails.
 *
 * <p>{@link #lost()} completes, and the keeper stops, when the cluster answers that the lease no
 * longer lives, or when no keep-alive has been answered for a whole TTL since the last one that was
 * (counted from when that one was sent, which is no later than the leader restarted the TTL): from
 * then on the lease may have expired, and whoever relies on it (a lock holder) must stop acting on
 * it. Closing the keeper does not revoke the lease; it expires after its TTL.
 */
public final class LeaseKeeper implements AutoCloseable {
  private final RetryingCall.Settings settings;
  private final Lease lease;
  private final CompletableFuture<String> lost = new CompletableFuture<>();

  /** When the newest answered keep-alive was sent: the lease lives at least a TTL after it. */
  private long renewedAtNanos;

  /** When each keep-alive on the current stream was sent, oldest first (answered in order). */
  private final ArrayDeque<Long> sent = new ArrayDeque<>();

  private StreamObserver<LeaseKeepAliveRequest> stream;
  private Context.CancellableContext streamContext;
  private ScheduledFuture<?> ticks;
  private boolean closed;

  LeaseKeeper(RetryingCall.Settings settings, Lease lease) {
    this.settings = settings;
    this.lease = lease;
    this.renewedAtNanos = System.nanoTime();
  }

  public Lease lease() {
    return lease;
  }

  /**
   * Completes with the reason once the lease is gone or may be gone; never completes while the
   * keeper keeps it alive.
   */
  public CompletableFuture<String> lost() {
    return lost;
  }

  /** Whether the lease is known to live: renewed within its TTL and not reported gone. */
  public synchronized boolean alive() {
    return !lost.isDone() && System.nanoTime() - renewedAtNanos < lease.ttl().toNanos();
  }

  synchronized void start() {
    long every = Math.max(1, lease.ttl().toMillis() / 3);
    ticks = settings.timer().scheduleWithFixedDelay(this::tick, 0, every, TimeUnit.MILLISECONDS);
  }

  private synchronized void tick() {
    if (closed) {
      return;
    }
    if (System.nanoTime() - renewedAtNanos >= lease.ttl().toNanos()) {
      lose("no keep-alive of lease " + lease.id() + " was answered for a whole TTL");
      return;
    }
    if (stream == null) {
      open();
    }
    sent.add(System.nanoTime());
    stream.onNext(LeaseKeepAliveRequest.newBuilder().setId(lease.id()).build());
  }

  private void open() {
    int at = settings.endpoints().nextHealthy();
    Context.CancellableContext ctx = Context.current().withCancellation();
    streamContext = ctx;
    sent.clear();
    Context previous = ctx.attach();
    try {
      stream = LeaseGrpc.newStub(settings.endpoints().channel(at)).keepAlive(new Answers(ctx));
    } finally {
      ctx.detach(previous);
    }
  }

  private final class Answers implements StreamObserver<LeaseKeepAliveResponse> {
    private final Context.CancellableContext ctx;

    Answers(Context.CancellableContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void onNext(LeaseKeepAliveResponse r) {
      synchronized (LeaseKeeper.this) {
        if (ctx != streamContext || closed) {
          return;
        }
        Long sentAt = sent.poll();
        if (!r.getFound()) {
          lose("lease " + lease.id() + " no longer lives (expired or revoked)");
          return;
        }
        if (sentAt != null && sentAt - renewedAtNanos > 0) {
          renewedAtNanos = sentAt;
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      synchronized (LeaseKeeper.this) {
        if (ctx == streamContext) {
          // The next tick opens a stream to another node.
          settings.onEndpointFailure().run();
          stream = null;
          streamContext = null;
        }
      }
    }

    @Override
    public void onCompleted() {
      onError(new IllegalStateException("the node ended the keep-alive stream"));
    }
  }

  private void lose(String why) {
    stop();
    lost.complete(why);
  }

  private void stop() {
    closed = true;
    if (ticks != null) {
      ticks.cancel(false);
    }
    if (stream != null) {
      try {
        stream.onCompleted();
      } catch (RuntimeException alreadyClosed) {
        // the stream failed meanwhile: nothing to end
      }
      streamContext.cancel(null);
      stream = null;
    }
  }

  /** Stops keeping the lease alive (it expires after its TTL unless revoked first). */
  @Override
  public synchronized void close() {
    if (!closed) {
      stop();
    }
  }

  /** The TTL this keeper renews. */
  public Duration ttl() {
    return lease.ttl();
  }
}
