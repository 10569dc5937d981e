package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.CompactedException;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleException;
import io.shale.client.Watch;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import io.shale.node.local.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Watches through the SDK against a real 3-node cluster: order, exactly once, resume, errors. */
class WatchClusterTest {
  @TempDir Path dir;
  private LocalCluster cluster;
  private ShaleClient client;

  @BeforeEach
  void start() throws Exception {
    cluster = new LocalCluster(dir, 3);
    cluster.leader();
    client = client(cluster.apiEndpoints());
  }

  private static ShaleClient client(List<String> endpoints) {
    return ShaleClient.builder()
        .endpoints(endpoints.toArray(String[]::new))
        .deadline(Duration.ofSeconds(30))
        .build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    cluster.close();
  }

  /** Collects what a watch delivers. */
  static final class Recorder implements WatchListener {
    final List<WatchEvent> events = new CopyOnWriteArrayList<>();
    final CompletableFuture<ShaleException> error = new CompletableFuture<>();
    volatile long through;

    @Override
    public void onEvents(List<WatchEvent> batch, long throughIndex) {
      events.addAll(batch);
      through = throughIndex;
    }

    @Override
    public void onError(ShaleException e) {
      error.complete(e);
    }

    List<String> values() {
      return events.stream()
          .map(
              e ->
                  e.type() == WatchEvent.Type.DELETE
                      ? "-" + e.entry().keyUtf8()
                      : e.entry().valueUtf8())
          .toList();
    }
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void aPrefixWatchSeesPutsDeletesAndTransactionsInIndexOrder() throws Exception {
    Recorder r = new Recorder();
    try (Watch w = client.watch(WatchOptions.prefix("cfg/"), r)) {
      await(() -> w.resumeIndex() > 0, "the watch is created");
      client.put("cfg/a", "1");
      client.put("other", "x");
      client.put("cfg/a", "2");
      client.delete("cfg/a");
      client.txn().thenPut("cfg/b", "3").thenPut("cfg/c", "4").thenPut("out", "5").commit();
      await(() -> r.events.size() == 5, "five events");
      assertThat(r.values()).containsExactly("1", "2", "-cfg/a", "3", "4");
      assertThat(r.events.get(1).entry().version()).isEqualTo(2);
      assertThat(r.events.get(1).entry().createIndex())
          .isEqualTo(r.events.get(0).entry().modIndex());
      assertThat(r.events.get(3).entry().modIndex()).isEqualTo(r.events.get(4).entry().modIndex());
    }
  }

  @Test
  void aWatchFromAPastIndexReplaysTheHistory() throws Exception {
    client.put("k", "before");
    long first = client.get("k").modIndex();
    client.put("k", "after");
    Recorder r = new Recorder();
    try (Watch w = client.watch(WatchOptions.key("k").startIndex(first), r)) {
      await(() -> r.events.size() == 2, "two events");
      assertThat(r.values()).containsExactly("before", "after");
    }
  }

  @Test
  void aStartIndexOlderThanEveryHistoryIsCompacted() throws Exception {
    client.put("k", "1");
    client.put("k", "2");
    long written = client.get("k").modIndex();
    String n1 = cluster.running().get(0);
    var sm = cluster.node(n1).stateMachine();
    await(() -> sm.getLastAppliedTermIndex().getIndex() >= written, n1 + " applies " + written);
    sm.engine().flush(); // the restart replays nothing up to here: its history starts after it
    cluster.stop(n1);
    cluster.start(n1); // its history now starts where its engine reopened
    client.put("k", "3");
    Recorder r = new Recorder();
    try (ShaleClient only = client(List.of(cluster.peer(n1).apiAddress()));
        Watch w = only.watch(WatchOptions.key("k").startIndex(1), r)) {
      ShaleException e = r.error.get(30, TimeUnit.SECONDS);
      assertThat(e).isInstanceOf(CompactedException.class).hasMessageContaining("COMPACTED");
      assertThat(((CompactedException) e).oldestIndex()).isGreaterThan(written);
    }
  }

  @Test
  void aWatchResumesOnAnotherNodeWithNoChangeLostOrRepeated() throws Exception {
    Recorder r = new Recorder();
    int total = 60;
    try (Watch w = client.watch(WatchOptions.prefix("seq/"), r)) {
      await(() -> w.resumeIndex() > 0, "the watch is created");
      List<String> written = new ArrayList<>();
      String stopped = null;
      for (int i = 0; i < total; i++) {
        if (i == 20) {
          // Kill the node serving the watch (it may lead).
          String serving = w.endpoint();
          stopped =
              cluster.running().stream()
                  .filter(n -> cluster.peer(n).apiAddress().equals(serving))
                  .findFirst()
                  .orElseThrow();
          cluster.stop(stopped);
        }
        if (i == 30) {
          cluster.start(stopped);
        }
        if (i == 40) {
          cluster.stop(cluster.leader()); // and then the leader
        }
        String v = Integer.toString(i);
        client.put("seq/" + (i % 7), v);
        written.add(v);
      }
      await(() -> r.events.size() >= written.size(), written.size() + " events");
      assertThat(r.values()).containsExactlyElementsOf(written);
      assertThat(r.error).isNotDone();
    }
  }

  @Test
  void aMalformedWatchIsRefusedByName() throws Exception {
    Recorder r = new Recorder();
    try (Watch w =
        client.watch(
            WatchOptions.range(
                "b".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "a".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
            r)) {
      assertThatThrownBy(
              () -> {
                throw r.error.get(30, TimeUnit.SECONDS);
              })
          .hasMessageContaining("end must be after start");
    }
  }
}
