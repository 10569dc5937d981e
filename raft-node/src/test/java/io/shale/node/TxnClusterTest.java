package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.Entry;
import io.shale.client.InvalidRequestException;
import io.shale.client.Txn;
import io.shale.client.TxnResult;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Transactions and key revisions through the SDK against a real 3-node cluster. */
class TxnClusterTest extends ThreeNodeClusterTest {
  private static final int ACCOUNTS = 5;
  private static final long START = 1_000;

  @Test
  void getReportsCreateIndexAndVersion() {
    client.put("k", "1");
    client.put("k", "2");
    Entry e = client.get("k");
    assertThat(e.version()).isEqualTo(2);
    assertThat(e.createIndex()).isPositive().isLessThan(e.modIndex());
    client.delete("k");
    client.put("k", "3");
    Entry again = client.get("k");
    assertThat(again.version()).isEqualTo(1);
    assertThat(again.createIndex()).isEqualTo(again.modIndex()).isGreaterThan(e.modIndex());
  }

  @Test
  void aTransactionTakesOneBranchAtomicallyAndReturnsItsGets() {
    TxnResult created =
        client
            .txn()
            .ifVersion("lock", Txn.Cmp.EQUAL, 0)
            .thenPut("lock", "a")
            .elseGet("lock")
            .commit();
    assertThat(created.succeeded()).isTrue();
    TxnResult taken =
        client
            .txn()
            .ifVersion("lock", Txn.Cmp.EQUAL, 0)
            .thenPut("lock", "b")
            .elseGet("lock")
            .commit();
    assertThat(taken.succeeded()).isFalse();
    assertThat(taken.entry(0).valueUtf8()).isEqualTo("a");
    assertThat(taken.entry(0).modIndex()).isEqualTo(created.index());
    assertThat(client.get("lock").valueUtf8()).isEqualTo("a");
  }

  @Test
  void aTransactionOverTheLimitIsRefusedNamingIt() {
    Txn t = client.txn();
    for (int i = 0; i < 129; i++) {
      t.thenPut("k" + i, "v");
    }
    assertThatThrownBy(t::commit)
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("limits.max_txn_ops");
    assertThat(client.get("k0")).isNull();
  }

  private static byte[] amount(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  private static long balance(Entry e) {
    return ByteBuffer.wrap(e.value()).getLong();
  }

  private static byte[] account(int i) {
    return ("acct-" + i).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Concurrent clients move money between accounts with read, then a transaction conditioned on
   * both accounts' modification indexes: conflicting transfers fail and are retried, none is lost
   * or doubled, so the total stays and each client's applied transfers show in the balances.
   */
  @Test
  void concurrentTransfersConserveMoney() throws Exception {
    var opening = client.batch();
    for (int i = 0; i < ACCOUNTS; i++) {
      opening.put(account(i), amount(START));
    }
    opening.commit();
    int workers = 4;
    int transfersEach = 25;
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    List<Future<long[]>> results = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      int seed = w;
      results.add(
          pool.submit(
              () -> {
                SplittableRandom random = new SplittableRandom(seed);
                long[] moved = new long[ACCOUNTS]; // net change per account by this worker
                long conflicts = 0;
                for (int n = 0; n < transfersEach; ) {
                  int from = random.nextInt(ACCOUNTS);
                  int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                  long amount = 1 + random.nextInt(50);
                  Entry f = client.get(account(from));
                  Entry t = client.get(account(to));
                  if (balance(f) < amount) {
                    continue;
                  }
                  TxnResult r =
                      client
                          .txn()
                          .ifModIndex(account(from), Txn.Cmp.EQUAL, f.modIndex())
                          .ifModIndex(account(to), Txn.Cmp.EQUAL, t.modIndex())
                          .thenPut(account(from), amount(balance(f) - amount))
                          .thenPut(account(to), amount(balance(t) + amount))
                          .commit();
                  if (r.succeeded()) {
                    moved[from] -= amount;
                    moved[to] += amount;
                    n++;
                  } else {
                    conflicts++;
                  }
                }
                return moved;
              }));
    }
    long[] expected = new long[ACCOUNTS];
    for (Future<long[]> f : results) {
      long[] moved = f.get();
      for (int i = 0; i < ACCOUNTS; i++) {
        expected[i] += moved[i];
      }
    }
    pool.shutdown();
    long total = 0;
    for (int i = 0; i < ACCOUNTS; i++) {
      long b = balance(client.get(account(i)));
      assertThat(b).as("account %d", i).isEqualTo(START + expected[i]).isNotNegative();
      total += b;
    }
    assertThat(total).isEqualTo(ACCOUNTS * START);
  }
}
