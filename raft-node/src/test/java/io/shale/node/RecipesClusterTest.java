package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.Txn;
import io.shale.client.TxnResult;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.recipes.Election;
import io.shale.client.recipes.Lock;
import io.shale.client.recipes.Session;
import io.shale.client.recipes.WatchCache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The SDK's recipes (lock, election, watch-driven cache) against a real 3-node cluster. */
class RecipesClusterTest extends ThreeNodeClusterTest {
  private ShaleClient client() {
    return newClient();
  }

  private static long counter(ShaleClient c) {
    Entry e = c.get("counter");
    return e == null ? 0 : Long.parseLong(e.valueUtf8());
  }

  /**
   * Four clients increment one counter under the lock with a read, then a write fenced only by the
   * lock's token (no compare on the counter itself): any overlap of two holders would lose an
   * increment. In-process, a holder count checks that no two ever overlap.
   */
  @Test
  void theLockLetsOneHolderAtATimeAndLosesNoFencedIncrement() throws Exception {
    int clientsN = 4;
    int rounds = 15;
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger maxHolders = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(clientsN);
    List<Future<Integer>> done = new ArrayList<>();
    for (int i = 0; i < clientsN; i++) {
      ShaleClient c = client();
      done.add(
          pool.submit(
              () -> {
                int applied = 0;
                try (Session s = Session.open(c, Duration.ofSeconds(5))) {
                  Lock lock = new Lock(s, "locks/counter");
                  for (int r = 0; r < rounds; r++) {
                    long token = lock.acquire(Duration.ofSeconds(60));
                    maxHolders.accumulateAndGet(holders.incrementAndGet(), Math::max);
                    long seen = counter(c);
                    TxnResult w =
                        c.txn()
                            .ifCreateIndex(lock.key(), Txn.Cmp.EQUAL, token)
                            .thenPut("counter", Long.toString(seen + 1))
                            .commit();
                    holders.decrementAndGet();
                    assertThat(lock.release()).isTrue();
                    applied += w.succeeded() ? 1 : 0;
                  }
                }
                return applied;
              }));
    }
    int applied = 0;
    for (Future<Integer> f : done) {
      applied += f.get();
    }
    pool.shutdown();
    assertThat(maxHolders.get()).isEqualTo(1);
    assertThat(applied).isEqualTo(clientsN * rounds);
    assertThat(counter(client)).isEqualTo(clientsN * rounds);
  }

  @Test
  void aHolderThatStopsKeepingItsLeaseLosesTheLockAndItsFencedWritesFail() throws Exception {
    ShaleClient a = client();
    ShaleClient b = client();
    Session sa = Session.open(a, Duration.ofSeconds(2));
    Lock la = new Lock(sa, "locks/x");
    long ta = la.acquire(Duration.ofSeconds(10));
    try (Session sb = Session.open(b, Duration.ofSeconds(5))) {
      Lock lb = new Lock(sb, "locks/x");
      assertThat(lb.tryAcquire()).isEqualTo(-1);
      sa.abandon(); // a's process "pauses": no more keep-alives, nothing revoked
      long tb = lb.acquire(Duration.ofSeconds(20));
      assertThat(tb).isGreaterThan(ta);
      assertThat(la.isHeld()).isFalse();
      // a wakes up and writes as if it held the lock: the fence stops it.
      assertThat(
              a.txn()
                  .ifCreateIndex("locks/x", Txn.Cmp.EQUAL, ta)
                  .thenPut("guarded", "from a")
                  .commit()
                  .succeeded())
          .isFalse();
      assertThat(a.get("guarded")).isNull();
      assertThat(la.release()).isFalse();
      assertThat(lb.release()).isTrue();
    }
  }

  @Test
  void anElectionHasOneLeaderAndTheNextTakesOverWhenItResigns() throws Exception {
    ShaleClient a = client();
    ShaleClient b = client();
    List<String> seen = new CopyOnWriteArrayList<>();
    try (Session sa = Session.open(a, Duration.ofSeconds(5));
        Session sb = Session.open(b, Duration.ofSeconds(5))) {
      Election ea = new Election(sa, "elections/db");
      Election eb = new Election(sb, "elections/db");
      var observer =
          eb.observe(
              new WatchListener() {
                @Override
                public void onEvents(List<WatchEvent> events, long throughIndex) {
                  for (WatchEvent e : events) {
                    seen.add(e.type() == WatchEvent.Type.DELETE ? "-" : e.entry().valueUtf8());
                  }
                }
              });
      ea.campaign("a:7201", Duration.ofSeconds(10));
      assertThat(ea.isLeader()).isTrue();
      assertThat(eb.leader().valueUtf8()).isEqualTo("a:7201");
      assertThatThrownBy(() -> eb.campaign("b:7202", Duration.ofMillis(500)))
          .isInstanceOf(TimeoutException.class);
      assertThat(ea.proclaim("a:7301")).isTrue();
      assertThat(ea.resign()).isTrue();
      eb.campaign("b:7202", Duration.ofSeconds(10));
      assertThat(eb.leader().valueUtf8()).isEqualTo("b:7202");
      assertThat(ea.proclaim("a:again")).isFalse();
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (seen.size() < 4 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(seen).containsExactly("a:7201", "a:7301", "-", "b:7202");
      observer.close();
    }
  }

  @Test
  void theWatchCacheStartsConsistentUnderWritesAndFollowsThem() throws Exception {
    ShaleClient writer = client();
    for (int i = 0; i < 50; i++) {
      writer.put("cfg/" + i, "v0");
    }
    // Writes go on while the cache starts: puts, deletes and re-puts of the same keys.
    AtomicInteger round = new AtomicInteger();
    Thread churn =
        new Thread(
            () -> {
              for (int r = 1; r <= 200; r++) {
                int k = r % 50;
                if (r % 7 == 0) {
                  writer.delete("cfg/" + k);
                } else {
                  writer.put("cfg/" + k, "v" + r);
                }
                round.set(r);
              }
            });
    churn.start();
    ShaleClient reader = client();
    try (WatchCache cache = WatchCache.open(reader, "cfg/", Duration.ofSeconds(30))) {
      churn.join();
      long last = writer.txn().thenPut("cfg/last", "1").commit().index();
      cache.awaitIndex(last, Duration.ofSeconds(30));
      List<String> expected = new ArrayList<>();
      for (Entry e : reader.scanPrefix("cfg/")) {
        expected.add(e.keyUtf8() + "=" + e.valueUtf8());
      }
      assertThat(cache.entries())
          .extracting(e -> e.keyUtf8() + "=" + e.valueUtf8())
          .containsExactlyElementsOf(expected);
      assertThat(cache.get("cfg/last").valueUtf8()).isEqualTo("1");
      assertThat(round.get()).isEqualTo(200);
    }
  }
}
