package io.shale.node.api;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Linearizable reads share read indexes: a read waits for a barrier (a read index this node
 * obtained and has applied up to) that started after the read arrived, then reads this node's
 * applied state. One barrier is in flight at a time; the reads that arrive meanwhile all ride the
 * next one, which starts when it ends. So at any concurrency a node asks for one read index per
 * round trip, not one per read.
 *
 * <p>Invariant: the future {@link #await} returns completes only after a barrier that began after
 * the call, so the state read then holds every write acknowledged before the read began.
 */
final class ReadBarrier {
  /** Starts one barrier: completes once this node has applied up to a fresh read index. */
  private final Supplier<CompletableFuture<?>> barrier;

  /** Whether a barrier is in flight. */
  private boolean inFlight;

  /** The barrier reads arriving now will ride, started when the one in flight ends; or null. */
  private CompletableFuture<Void> next;

  ReadBarrier(Supplier<CompletableFuture<?>> barrier) {
    this.barrier = barrier;
  }

  /** Completes once a barrier begun after this call has passed (fails if that barrier failed). */
  CompletableFuture<Void> await() {
    CompletableFuture<Void> ride;
    synchronized (this) {
      if (inFlight) {
        if (next == null) {
          next = new CompletableFuture<>();
        }
        return next;
      }
      inFlight = true;
      ride = new CompletableFuture<>();
    }
    start(ride);
    return ride;
  }

  private void start(CompletableFuture<Void> ride) {
    CompletableFuture<?> b;
    try {
      b = barrier.get();
    } catch (RuntimeException e) {
      b = CompletableFuture.failedFuture(e);
    }
    b.whenComplete(
        (ignored, e) -> {
          CompletableFuture<Void> following;
          synchronized (this) {
            following = next;
            next = null;
            inFlight = following != null;
          }
          if (following != null) {
            start(following);
          }
          if (e == null) {
            ride.complete(null);
          } else {
            ride.completeExceptionally(e);
          }
        });
  }
}
