package io.shale.node.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.node.statemachine.LeaseEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The leader's lease clock on a stepped clock: who expires what, and when. */
class LeaseExpiryTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final List<Long> revoked = new ArrayList<>();
  private final List<CompletableFuture<Object>> pending = new ArrayList<>();
  private LeaseExpiry expiry;

  @BeforeEach
  void setUp() {
    expiry = new LeaseExpiry("n1", nanos::get, new SimpleMeterRegistry());
    expiry.revokeWith(
        id -> {
          revoked.add(id);
          CompletableFuture<Object> f = new CompletableFuture<>();
          pending.add(f);
          return f;
        });
  }

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  private static LeaseEvent granted(long id, long ttl) {
    return new LeaseEvent(LeaseEvent.Kind.GRANTED, id, ttl);
  }

  @Test
  void aFollowerNeverExpiresAnything() {
    expiry.leaderChanged("n2");
    expiry.applied(List.of(granted(5, 1_000)));
    advance(Duration.ofHours(1));
    assertThat(expiry.check()).isEmpty();
    assertThat(expiry.remainingMillis(5)).isEqualTo(-1);
    assertThat(expiry.live()).isEqualTo(1);
  }

  @Test
  void theLeaderRevokesALeaseOnceItsTtlRanOutAndAKeepAliveRestartsIt() {
    expiry.leaderChanged("n1");
    expiry.applied(List.of(granted(5, 1_000)));
    advance(Duration.ofMillis(700));
    assertThat(expiry.check()).isEmpty();
    assertThat(expiry.remainingMillis(5)).isEqualTo(300);
    expiry.applied(List.of(new LeaseEvent(LeaseEvent.Kind.KEPT_ALIVE, 5, 1_000)));
    advance(Duration.ofMillis(999));
    assertThat(expiry.check()).isEmpty();
    advance(Duration.ofMillis(1));
    assertThat(expiry.check()).containsExactly(5L);
    // In flight: not sent twice; failed: sent again by a later check.
    assertThat(expiry.check()).isEmpty();
    pending.get(0).completeExceptionally(new RuntimeException("no quorum"));
    assertThat(expiry.check()).containsExactly(5L);
    pending.get(1).complete(null);
    expiry.applied(List.of(new LeaseEvent(LeaseEvent.Kind.REVOKED, 5, 1_000)));
    assertThat(expiry.check()).isEmpty();
    assertThat(expiry.live()).isZero();
  }

  @Test
  void aNewLeaderGivesEveryLeaseItsFullTtlSoAFailoverNeverExpiresOneEarly() {
    expiry.leaderChanged("n2"); // n2 leads while the lease is granted and kept alive
    expiry.applied(List.of(granted(5, 1_000)));
    advance(Duration.ofMillis(900)); // 100 ms left on n2's clock when n2 fails
    expiry.leaderChanged("n1");
    advance(Duration.ofMillis(999));
    assertThat(expiry.check()).isEmpty();
    assertThat(expiry.remainingMillis(5)).isEqualTo(1);
    advance(Duration.ofMillis(1));
    assertThat(expiry.check()).containsExactly(5L);
  }

  @Test
  void losingLeadershipForgetsTheDeadlinesAndAnUnfinishedRevokeIsFinished() {
    expiry.leaderChanged("n1");
    expiry.applied(List.of(granted(5, 1_000)));
    expiry.leaderChanged("n3");
    advance(Duration.ofSeconds(5));
    assertThat(expiry.check()).isEmpty();
    expiry.applied(List.of(new LeaseEvent(LeaseEvent.Kind.REVOKE_UNFINISHED, 5, 1_000)));
    expiry.leaderChanged("n1");
    assertThat(expiry.check()).containsExactly(5L);
  }

  @Test
  void revokesInFlightAreBounded() {
    expiry.leaderChanged("n1");
    List<LeaseEvent> many = new ArrayList<>();
    for (long id = 1; id <= LeaseExpiry.MAX_REVOKES_IN_FLIGHT + 10; id++) {
      many.add(granted(id, 10));
    }
    expiry.applied(many);
    advance(Duration.ofSeconds(1));
    assertThat(expiry.check()).hasSize(LeaseExpiry.MAX_REVOKES_IN_FLIGHT);
    assertThat(expiry.check()).isEmpty();
    // Answered but not applied yet (no REVOKED event): due again, still at most the bound.
    pending.forEach(f -> f.complete(null));
    assertThat(expiry.check()).hasSize(LeaseExpiry.MAX_REVOKES_IN_FLIGHT);
  }
}
