package io.shale.node.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ReadBarrierTest {
  /** The barriers started, in order; each completes when the test says. */
  private final List<CompletableFuture<Object>> started = new ArrayList<>();

  private final ReadBarrier reads =
      new ReadBarrier(
          () -> {
            CompletableFuture<Object> b = new CompletableFuture<>();
            started.add(b);
            return b;
          });

  @Test
  void aReadRidesOnlyABarrierThatBeganAfterIt() {
    CompletableFuture<Void> first = reads.await();
    assertThat(started).hasSize(1);
    CompletableFuture<Void> second = reads.await(); // arrives while barrier 0 is in flight
    started.get(0).complete(null);
    assertThat(first).isCompleted();
    assertThat(second).as("barrier 0 began before the second read").isNotDone();
    assertThat(started).as("the next barrier starts when one ends").hasSize(2);
    started.get(1).complete(null);
    assertThat(second).isCompleted();
  }

  @Test
  void readsArrivingDuringOneBarrierShareTheNext() {
    reads.await();
    List<CompletableFuture<Void>> waiting = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      waiting.add(reads.await());
    }
    started.get(0).complete(null);
    started.get(1).complete(null);
    assertThat(started).as("two barriers for 101 reads").hasSize(2);
    assertThat(waiting).allMatch(CompletableFuture::isDone);
    // Idle again: the next read starts a barrier at once.
    CompletableFuture<Void> later = reads.await();
    assertThat(started).hasSize(3);
    assertThat(later).isNotDone();
  }

  @Test
  void aFailedBarrierFailsItsReadsAndTheNextStillRuns() {
    CompletableFuture<Void> first = reads.await();
    CompletableFuture<Void> second = reads.await();
    started.get(0).completeExceptionally(new IOException("leader changed"));
    assertThat(first).isCompletedExceptionally();
    assertThat(second).isNotDone();
    started.get(1).complete(null);
    assertThat(second).isCompleted();
  }
}
