package io.shale.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.client.Entry;
import io.shale.client.Expectation;
import io.shale.client.ReadConsistency;
import io.shale.client.RetryPolicy;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleTimeoutException;
import io.shale.client.ShaleUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The SDK when nodes fail: one fresh 3-node cluster per test. */
class ShaleClientFailoverTest {
  @RegisterExtension final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  /**
   * Three writers increment their own counters by compare-and-set while a fourth puts distinct
   * keys; the leader's node is stopped while they run. The client moves to other nodes and retries
   * with the same request ids: every counter ends at exactly the number of increments acknowledged
   * (a retried increment applied twice would make the next comparison fail, and a lost one would
   * leave the counter short), and every acknowledged put is there.
   */
  @Test
  void leaderStoppedMidStreamEveryAcknowledgedWriteAppliesExactlyOnce() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ShaleClient client =
        cluster.newClient(
            b ->
                b.meterRegistry(registry)
                    .deadline(Duration.ofSeconds(30))
                    .retryPolicy(
                        new RetryPolicy(
                            30,
                            Duration.ofMillis(50),
                            Duration.ofMillis(500),
                            Duration.ofSeconds(5))));
    int increments = 80;
    int writers = 3;
    CountDownLatch halfway = new CountDownLatch(writers);
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Integer> ackedPuts = new ConcurrentLinkedQueue<>();
    AtomicInteger countersDone = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
    List<Future<?>> tasks = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      String key = "counter/" + w;
      tasks.add(
          pool.submit(
              () -> {
                client.put(key, "0");
                for (int i = 0; i < increments; i++) {
                  if (i == increments / 4) {
                    halfway.countDown();
                  }
                  if (!client
                      .compareAndSet(
                          key, Expectation.value(String.valueOf(i)), String.valueOf(i + 1))
                      .applied()) {
                    failures.add(
                        key + ": increment " + i + " found " + client.get(key).valueUtf8());
                    return;
                  }
                }
                countersDone.incrementAndGet();
              }));
    }
    tasks.add(
        pool.submit(
            () -> {
              for (int i = 0; countersDone.get() < writers; i++) {
                client.put("seq/" + i, "v" + i);
                ackedPuts.add(i);
              }
            }));
    assertThat(halfway.await(60, TimeUnit.SECONDS)).isTrue();
    String leader = cluster.leader();
    cluster.stop(leader);
    for (Future<?> t : tasks) {
      t.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();

    assertThat(failures).isEmpty();
    assertThat(cluster.leader()).isNotEqualTo(leader);
    for (int w = 0; w < writers; w++) {
      assertThat(client.get("counter/" + w).valueUtf8())
          .as("counter %d", w)
          .isEqualTo(String.valueOf(increments));
    }
    for (int i : ackedPuts) {
      Entry e = client.get("seq/" + i);
      assertThat(e).as("acknowledged put seq/%d", i).isNotNull();
      assertThat(e.valueUtf8()).isEqualTo("v" + i);
    }
    assertThat(ackedPuts).hasSizeGreaterThan(10);
    double retries =
        registry.find("shale.client.retries").counters().stream().mapToDouble(c -> c.count()).sum();
    assertThat(retries).as("calls in flight at the stopped leader were retried").isPositive();
  }

  /**
   * With two of three nodes down no write can commit: with retries to spare, the call ends at its
   * deadline (not later) with a ShaleTimeoutException saying the write may or may not have applied;
   * with few attempts, it ends when they are spent, naming the endpoints tried; a stale read is
   * still served by the node left.
   */
  @Test
  void withoutAMajorityCallsEndAtTheirDeadline() throws Exception {
    ShaleClient client =
        cluster.newClient(
            b ->
                b.deadline(Duration.ofMillis(1500))
                    .retryPolicy(
                        new RetryPolicy(
                            1000,
                            Duration.ofMillis(20),
                            Duration.ofMillis(100),
                            Duration.ofSeconds(5))));
    ShaleClient fewAttempts =
        cluster.newClient(
            b ->
                b.deadline(Duration.ofSeconds(20))
                    .retryPolicy(
                        new RetryPolicy(
                            3,
                            Duration.ofMillis(20),
                            Duration.ofMillis(100),
                            Duration.ofMillis(500))));
    client.put("k", "before");
    String leader = cluster.leader();
    String survivor = null;
    for (String id : cluster.runningNodes()) {
      if (id.equals(leader)) {
        continue;
      }
      if (survivor == null) {
        survivor = id;
      } else {
        cluster.stop(id);
      }
    }
    cluster.stop(leader);

    long start = System.nanoTime();
    assertThatThrownBy(() -> client.put("k", "after"))
        .isInstanceOf(ShaleTimeoutException.class)
        .hasMessageContaining("deadline of 1500 ms")
        .hasMessageContaining("may or may not have been applied");
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(millis).as("ended at the deadline").isBetween(1400L, 3500L);

    start = System.nanoTime();
    assertThatThrownBy(() -> client.get("k")).isInstanceOf(ShaleTimeoutException.class);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3500L);

    start = System.nanoTime();
    assertThatThrownBy(() -> fewAttempts.put("k", "after"))
        .isInstanceOf(ShaleUnavailableException.class)
        .hasMessageContaining("3 attempts")
        .hasMessageContaining(cluster.endpoints().get(0));
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3500L);

    Entry stale = client.get("k".getBytes(), ReadConsistency.STALE);
    assertThat(stale.valueUtf8()).as("served by %s alone", survivor).isEqualTo("before");
  }
}
