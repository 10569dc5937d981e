package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.Test;

/**
 * The two rules of a snapshot hand-off to Ratis, each from a follower the nemesis left behind: no
 * fetch while a reload runs (run 31), and a delivered install no leader consumes is reported once
 * the bound has passed (run 19).
 */
class InstallHandoffTest {
  private static final TermIndex FETCHED = TermIndex.valueOf(3, 148_224);

  @Test
  void aFetchWaitsUntilTheReloadBeforeItHasEnded() throws Exception {
    InstallHandoff h = new InstallHandoff();
    h.delivered(FETCHED, "n2");
    h.reloadStarting();
    CompletableFuture<Boolean> fetch =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return h.awaitNoReload(Duration.ofSeconds(30));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(300);
    assertThat(fetch).as("a fetch during the reload").isNotDone();
    h.reloaded();
    assertThat(fetch.get(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aReloadThatDoesNotEndBoundsTheWait() throws Exception {
    InstallHandoff h = new InstallHandoff();
    h.reloadStarting();
    assertThat(h.awaitNoReload(Duration.ofMillis(100))).isFalse();
  }

  @Test
  void withNoReloadAFetchStartsAtOnce() throws Exception {
    InstallHandoff h = new InstallHandoff();
    assertThat(h.awaitNoReload(Duration.ZERO)).isTrue();
    h.delivered(FETCHED, "n2");
    assertThat(h.awaitNoReload(Duration.ZERO)).as("delivered, not yet consumed").isTrue();
  }

  @Test
  void aDeliveredInstallIsStrandedOnlyOnceTheBoundHasPassed() throws Exception {
    InstallHandoff h = new InstallHandoff();
    h.delivered(FETCHED, "n1");
    assertThat(h.unconsumedFor(Duration.ofHours(1))).isNull();
    Thread.sleep(50);
    assertThat(h.unconsumedFor(Duration.ofMillis(50))).isEqualTo(FETCHED);
    assertThat(h.deliveredNotReloaded()).isEqualTo(FETCHED);
    assertThat(h.requester()).isEqualTo("n1");
  }

  @Test
  void aReloadConsumesTheDeliveredInstall() {
    InstallHandoff h = new InstallHandoff();
    h.delivered(FETCHED, "n1");
    h.reloadStarting();
    assertThat(h.deliveredNotReloaded()).isNull();
    assertThat(h.unconsumedFor(Duration.ZERO)).isNull();
    h.reloaded();
    assertThat(h.deliveredNotReloaded()).isNull();
    assertThat(h.requester()).isNull();
  }

  @Test
  void aFetchStartsOnlyOnceRatisHasHadTimeToFinishTheReload() throws Exception {
    InstallHandoff h = new InstallHandoff();
    h.reloadStarting();
    h.reloaded();
    long start = System.nanoTime();
    assertThat(h.awaitNoReload(Duration.ZERO)).as("just after the reload").isFalse();
    assertThat(h.awaitNoReload(Duration.ofSeconds(5))).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(InstallHandoff.DEFAULT_SETTLE);
  }

  @Test
  void anInstallRatisHasInPlaceAlreadyWaitsForNothing() {
    InstallHandoff h = new InstallHandoff();
    h.delivered(FETCHED, "n1");
    h.alreadyInPlace();
    assertThat(h.unconsumedFor(Duration.ZERO)).isNull();
    assertThat(h.deliveredNotReloaded()).isNull();
  }
}
