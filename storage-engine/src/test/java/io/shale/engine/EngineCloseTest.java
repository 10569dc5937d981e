package io.shale.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Close waits for reads in flight and refuses new ones; it never pulls files from under a read. */
class EngineCloseTest {
  @TempDir Path dir;

  @Test
  void closeWaitsForAnOpenScanWhichStillReadsEverything() throws Exception {
    Engine engine = Engine.open(dir, EngineOptions.defaults());
    for (int i = 0; i < 500; i++) {
      engine.apply(
          new WriteBatch().put(String.format("k%04d", i).getBytes(UTF_8), new byte[100]), i + 1);
      if (i == 250) {
        engine.flush();
      }
    }
    engine.flush();
    ScanIterator it = engine.scan(new ScanOptions(new byte[0], null, Long.MAX_VALUE, false, false));
    assertThat(it.next()).isTrue();
    CompletableFuture<Void> closing =
        CompletableFuture.runAsync(
            () -> {
              try {
                engine.close();
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    // New reads are refused once the close has begun.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    boolean refused = false;
    while (!refused && System.nanoTime() < deadline) {
      try {
        engine.get("k0001".getBytes(UTF_8));
        Thread.onSpinWait();
      } catch (IllegalStateException e) {
        assertThat(e).hasMessageContaining("is closed");
        refused = true;
      }
    }
    assertThat(refused).as("a get refused within 5 s of close starting").isTrue();
    assertThat(closing).as("close waits for the open scan").isNotDone();
    int count = 1;
    while (it.next()) {
      assertThat(it.value()).hasSize(100);
      count++;
    }
    assertThat(count).isEqualTo(500);
    assertThat(engine.tableMemory().openArenas()).as("the scan's tables stay open").isPositive();
    it.close();
    closing.get(10, TimeUnit.SECONDS);
    ModelBasedEngineTest.assertNoNativeMemoryLeft(engine, "after close");
    assertThatThrownBy(() -> engine.get("k0001".getBytes(UTF_8))).hasMessageContaining("is closed");
  }

  /**
   * A snapshot left open across close keeps its memtables' native chunks (it can still reach them);
   * they are freed when it closes, not before and not never.
   */
  @Test
  void memtableChunksOutliveCloseOnlyAsLongAsASnapshotHoldsThem() throws Exception {
    Engine engine = Engine.open(dir, EngineOptions.defaults());
    for (int i = 0; i < 100; i++) {
      engine.apply(
          new WriteBatch().put(String.format("k%04d", i).getBytes(UTF_8), new byte[100]), i + 1);
    }
    Snapshot snapshot = engine.snapshot();
    assertThat(snapshot.get("k0042".getBytes(UTF_8))).hasSize(100);
    engine.close();
    assertThat(engine.memtableMemory().liveChunks())
        .as("the snapshot's memtable is still reachable")
        .isPositive();
    snapshot.close();
    ModelBasedEngineTest.assertNoNativeMemoryLeft(engine, "after the snapshot closed");
  }
}
