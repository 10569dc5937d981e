package io.shale.node.statemachine;

import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;

/**
 * Futures completed when the replica's applied index reaches theirs: how a node that proposed an
 * entry answers only once it applies it itself (read-your-writes on that node). Thread-safe.
 */
final class AppliedWaits {
  private record Wait(long index, CompletableFuture<Void> done) {}

  private final PriorityQueue<Wait> waits =
      new PriorityQueue<>((a, b) -> Long.compare(a.index(), b.index()));

  synchronized CompletableFuture<Void> await(long index) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    waits.add(new Wait(index, f));
    return f;
  }

  /** Completes every wait at or below {@code applied}. */
  void reached(long applied) {
    while (true) {
      Wait w;
      synchronized (this) {
        if (waits.isEmpty() || waits.peek().index() > applied) {
          return;
        }
        w = waits.poll();
      }
      w.done().complete(null);
    }
  }
}
