package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.local.LocalCluster;
import io.shale.node.server.ShaleNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.util.LifeCycle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Raft division that Ratis closes outside a shutdown is reported once; a node's own close is not
 * a loss.
 */
class DivisionWatchTest {
  @TempDir Path dir;

  @Test
  void aDivisionClosedUnderARunningNodeIsReportedOnce() throws Exception {
    CountDownLatch lost = new CountDownLatch(1);
    List<String> reports = new CopyOnWriteArrayList<>();
    LocalCluster cluster = LocalCluster.configuredOnly(dir, 1);
    try (ShaleNode node =
        ShaleNode.start(
            cluster.config("n1"),
            false,
            why -> {
              reports.add(why);
              lost.countDown();
            })) {
      // What Ratis does when its log worker fails: the division closes, the server stays up.
      node.server().getDivision(node.group().getGroupId()).close();

      assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(reports).hasSize(1);
      assertThat(reports.get(0)).containsPattern("CLOS(ING|ED) outside a shutdown");
    }
  }

  @Test
  void afterCloseAClosedDivisionIsNotALoss() {
    AtomicReference<LifeCycle.State> state = new AtomicReference<>(LifeCycle.State.RUNNING);
    List<String> reports = new CopyOnWriteArrayList<>();
    DivisionWatch watch = new DivisionWatch();
    // The timer never fires within the test: every look is the test's own.
    watch.start(state::get, Duration.ofHours(1), reports::add);
    watch.check();
    assertThat(reports).isEmpty();
    watch.close();
    state.set(LifeCycle.State.CLOSED); // what closing the node does to its division
    watch.check();
    assertThat(reports).isEmpty();
    assertThat(watch.lost()).isFalse();
  }

  @Test
  void aLossIsReportedOnlyOnce() {
    List<String> reports = new CopyOnWriteArrayList<>();
    DivisionWatch watch = new DivisionWatch();
    watch.start(() -> LifeCycle.State.CLOSING, Duration.ofHours(1), reports::add);
    try {
      watch.check();
      watch.check();
    } finally {
      watch.close();
    }
    assertThat(reports).singleElement().asString().contains("CLOSING");
    assertThat(watch.lost()).isTrue();
  }

  @Test
  void aRunningDivisionIsNotALossOneInExceptionIs() throws Exception {
    AtomicReference<LifeCycle.State> state = new AtomicReference<>(LifeCycle.State.RUNNING);
    CountDownLatch lost = new CountDownLatch(1);
    List<String> reports = new CopyOnWriteArrayList<>();
    CountDownLatch checkedTwice = new CountDownLatch(2);
    DivisionWatch watch = new DivisionWatch();
    watch.start(
        () -> {
          checkedTwice.countDown();
          return state.get();
        },
        Duration.ofMillis(5),
        why -> {
          reports.add(why);
          lost.countDown();
        });
    try {
      assertThat(checkedTwice.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(watch.lost()).isFalse();
      state.set(LifeCycle.State.EXCEPTION);
      assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(reports).singleElement().asString().contains("EXCEPTION");
    } finally {
      watch.close();
    }
  }
}
