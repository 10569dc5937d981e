package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Transfers pin checkpoints each under their own token, and only for their lease. */
class CheckpointStoreTest {
  @TempDir Path dir;

  private static void write(Engine e, long index) {
    byte[] k = ("k" + index).getBytes(StandardCharsets.UTF_8);
    e.apply(new WriteBatch().put(k, k), index);
  }

  @Test
  void aTransferPinsItsCheckpointUntilItsOwnReleaseAndNoOtherTokenReleasesIt() throws IOException {
    try (Engine e = Engine.open(dir.resolve("engine"), EngineOptions.defaults())) {
      CheckpointStore store = new CheckpointStore(dir.resolve("checkpoints"), Duration.ofHours(1));
      write(e, 1);
      store.take(e, i -> 1);
      CheckpointStore.Transfer a = store.pinNewest();
      CheckpointStore.Transfer b = store.pinNewest();
      assertThat(a.token()).isNotEqualTo(b.token()).isNotZero();
      assertThat(a.checkpoint()).isSameAs(b.checkpoint());

      write(e, 2);
      store.take(e, i -> 1);
      assertThat(store.size()).as("the pinned checkpoint and the new one").isEqualTo(2);
      // A made-up token, and one used twice, release nothing of another transfer.
      store.release(a.token() ^ 1);
      store.release(a.token());
      store.release(a.token());
      assertThat(store.use(a.token())).isNull();
      assertThat(store.use(b.token())).isSameAs(b.checkpoint());
      assertThat(store.size()).isEqualTo(2);
      assertThat(Files.isDirectory(b.checkpoint().directory())).isTrue();

      store.release(b.token());
      assertThat(store.size()).isEqualTo(1);
      assertThat(Files.exists(b.checkpoint().directory())).isFalse();
      assertThat(store.transfers()).isZero();
    }
  }

  @Test
  void aTransferWhoseLeaseLapsedNoLongerPinsNorReads() throws IOException {
    try (Engine e = Engine.open(dir.resolve("engine"), EngineOptions.defaults())) {
      // A zero lease has lapsed by the time anything asks.
      CheckpointStore store = new CheckpointStore(dir.resolve("checkpoints"), Duration.ZERO);
      write(e, 1);
      store.take(e, i -> 1);
      CheckpointStore.Transfer t = store.pinNewest();
      assertThat(store.use(t.token())).isNull();
      write(e, 2);
      store.take(e, i -> 1);
      assertThat(store.size()).isEqualTo(1);
      assertThat(Files.exists(t.checkpoint().directory())).isFalse();
    }
  }

  @Test
  void aCheckpointOfWhatIsDurableAsksForTheFlushThatLetsTheNextOneCatchUp() throws Exception {
    try (Engine e = Engine.open(dir.resolve("engine"), EngineOptions.defaults())) {
      CheckpointStore store = new CheckpointStore(dir.resolve("checkpoints"), Duration.ofHours(1));
      write(e, 1);
      CheckpointStore.Checkpoint first = store.take(e, i -> 1);
      assertThat(first.index()).isEqualTo(1);
      write(e, 2); // in the memtable only: a default memtable is far from full
      CheckpointStore.Checkpoint durable = store.takeOfDurable(e, i -> 1);
      assertThat(durable.index()).as("never past what is durable").isBetween(1L, 2L);
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (e.persistedAppliedIndex() < 2) {
        assertThat(System.nanoTime()).as("the requested flush happened").isLessThan(deadline);
        Thread.sleep(5);
      }
      CheckpointStore.Checkpoint next = store.takeOfDurable(e, i -> 1);
      assertThat(next.index()).isEqualTo(2);
      assertThat(store.takeOfDurable(e, i -> 1)).as("nothing new: the same").isSameAs(next);
    }
  }
}
