package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * When a fetched snapshot is still wanted: the follower n4 of the nemesis run that found the fault
 * was asked by n5, and n3 was elected during the fetch.
 */
class LeaderWatchTest {
  @Test
  void aFetchWhoseRequesterStillLeadsIsWanted() {
    LeaderWatch w = new LeaderWatch();
    w.elected("n5");
    LeaderWatch.Mark mark = w.mark("n5");
    assertThat(w.replacedSince(mark)).isFalse();
  }

  @Test
  void anotherLeaderElectedDuringTheFetchReplacesTheRequester() {
    LeaderWatch w = new LeaderWatch();
    w.elected("n5");
    LeaderWatch.Mark mark = w.mark("n5");
    w.elected("n3");
    assertThat(w.replacedSince(mark)).isTrue();
    assertThat(w.leader()).isEqualTo("n3");
  }

  @Test
  void aRequesterReElectedDuringTheFetchStillNotifies() {
    LeaderWatch w = new LeaderWatch();
    w.elected("n5");
    LeaderWatch.Mark mark = w.mark("n5");
    w.elected("n3");
    w.elected("n5");
    assertThat(w.replacedSince(mark)).isFalse();
  }

  @Test
  void aLeaderElectedBeforeTheMarkDoesNotCount() {
    LeaderWatch w = new LeaderWatch();
    w.elected("n3");
    w.elected("n5");
    assertThat(w.replacedSince(w.mark("n5"))).isFalse();
  }
}
