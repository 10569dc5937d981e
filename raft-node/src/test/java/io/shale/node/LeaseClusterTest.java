package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.Lease;
import io.shale.client.LeaseKeeper;
import io.shale.client.LeaseNotFoundException;
import io.shale.client.LeaseTimeToLive;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Leases through the SDK against a real 3-node cluster: keep-alive, expiry, failover, revoke. */
class LeaseClusterTest extends ThreeNodeClusterTest {

  /**
   * Checks {@code condition} holds on every poll answered before {@code untilNanos}. A poll
   * answered later says nothing about the window: a get across a leader's death can take the SDK's
   * whole attempt timeout (5 s) and see what may happen after it.
   */
  private static void holdsUntil(long untilNanos, BooleanSupplier condition, String what)
      throws InterruptedException {
    while (System.nanoTime() < untilNanos) {
      boolean holds = condition.getAsBoolean();
      if (System.nanoTime() >= untilNanos) {
        return;
      }
      assertThat(holds).as(what).isTrue();
      Thread.sleep(100);
    }
  }

  @Test
  void aKeptAliveLeaseOutlivesItsTtlAndExpiresOnceTheKeepAlivesStop() throws Exception {
    Lease lease = client.leases().grant(Duration.ofSeconds(2));
    client.put("svc/a", "up", lease.id());
    LeaseKeeper keeper = client.leases().keepAlive(lease);
    // Three TTLs with keep-alives: the key stays.
    holdsUntil(
        System.nanoTime() + TimeUnit.SECONDS.toNanos(6),
        () -> client.get("svc/a") != null,
        "the kept-alive lease's key is there");
    assertThat(keeper.alive()).isTrue();
    assertThat(keeper.lost()).isNotDone();
    LeaseTimeToLive ttl = client.leases().timeToLive(lease.id(), true);
    assertThat(ttl.granted()).isEqualTo(Duration.ofSeconds(2));
    assertThat(ttl.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2));
    assertThat(ttl.keys()).extracting(String::new).containsExactly("svc/a");
    assertThat(client.leases().list()).extracting(Lease::id).contains(lease.id());

    keeper.close();
    long stopped = System.nanoTime();
    await(() -> client.get("svc/a") == null, Duration.ofSeconds(15), "the key expired");
    // Not before the TTL: the last keep-alive was sent before the keeper closed.
    assertThat(Duration.ofNanos(System.nanoTime() - stopped))
        .isGreaterThan(Duration.ofMillis(1_000));
    assertThat(client.leases().list()).extracting(Lease::id).doesNotContain(lease.id());
    assertThatThrownBy(() -> client.leases().timeToLive(lease.id(), false))
        .isInstanceOf(LeaseNotFoundException.class);
    assertThatThrownBy(() -> client.put("svc/b", "up", lease.id()))
        .isInstanceOf(LeaseNotFoundException.class);
    assertThat(client.get("svc/b")).isNull();
  }

  @Test
  void aLeaderChangeRestartsTheTtlSoNoLeaseExpiresEarly() throws Exception {
    Lease lease = client.leases().grant(Duration.ofSeconds(4));
    client.put("member/x", "here", lease.id());
    // Most of the TTL passes on the first leader's clock, then it dies.
    long granted = System.nanoTime();
    await(
        () -> System.nanoTime() - granted > TimeUnit.MILLISECONDS.toNanos(2_500),
        Duration.ofSeconds(5),
        "2.5 s of the TTL passed");
    String old = cluster.leader();
    long killed = System.nanoTime();
    cluster.stop(old);
    // The new leader counts the whole TTL from when it took over, which is after the kill: the
    // key lives at least 4 s past it (3.5 s checked, for polling slack).
    holdsUntil(
        killed + TimeUnit.MILLISECONDS.toNanos(3_500),
        () -> client.get("member/x") != null,
        "the lease did not expire early across the leader change");
    await(
        () -> client.get("member/x") == null,
        Duration.ofSeconds(20),
        "the lease expired under the new leader");
    assertThat(cluster.leader()).isNotEqualTo(old);
  }

  @Test
  void revokeDeletesTheLeasesKeysAtOnceAndOnlyThose() {
    Lease a = client.leases().grant(Duration.ofMinutes(1));
    Lease b = client.leases().grant(Duration.ofMinutes(1));
    client.put("a/1", "x", a.id());
    client.txn().thenPut("a/2", "x", a.id()).thenPut("b/1", "x", b.id()).commit();
    client.put("plain", "x");
    assertThat(client.leases().revoke(a.id())).isEqualTo(2);
    assertThat(client.get("a/1")).isNull();
    assertThat(client.get("a/2")).isNull();
    assertThat(client.get("b/1")).isNotNull();
    assertThat(client.get("plain")).isNotNull();
    assertThatThrownBy(() -> client.leases().revoke(a.id()))
        .isInstanceOf(LeaseNotFoundException.class);
    assertThat(client.leases().list()).extracting(Lease::id).containsExactly(b.id());
    assertThatThrownBy(() -> client.leases().grant(Duration.ofMillis(10)))
        .hasMessageContaining("lease.min_ttl");
    List<Lease> all = client.leases().list();
    assertThat(all).hasSize(1);
  }

  /**
   * Leases live in the engine beside their keys: a cluster stopped whole and started again has them
   * (the new leader loads them and restarts their TTLs), and revoking one still deletes its keys.
   */
  @Test
  void leasesAndTheirKeysSurviveAWholeClusterRestart() throws Exception {
    Lease lease = client.leases().grant(Duration.ofSeconds(60));
    client.put("svc/durable", "up", lease.id());
    for (String id : List.of("n1", "n2", "n3")) {
      cluster.stop(id);
    }
    for (String id : List.of("n1", "n2", "n3")) {
      cluster.start(id);
    }
    cluster.leader();
    assertThat(client.leases().list()).extracting(Lease::id).containsExactly(lease.id());
    LeaseTimeToLive ttl = client.leases().timeToLive(lease.id(), true);
    assertThat(ttl.remaining()).isGreaterThan(Duration.ofSeconds(50));
    assertThat(ttl.keys()).extracting(String::new).containsExactly("svc/durable");
    assertThat(client.leases().revoke(lease.id())).isEqualTo(1);
    assertThat(client.get("svc/durable")).isNull();
  }
}
