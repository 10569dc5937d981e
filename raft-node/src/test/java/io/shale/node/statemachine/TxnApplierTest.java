package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.WriteBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Transactions through the applier on a real engine: compares, branches, atomicity, retries. */
class TxnApplierTest extends ApplierFixture {

  private void put(String k, String v) {
    commit(new Command.Batch(List.of(new Command.Op(b(k), b(v)))));
  }

  private static Command.Txn txn(List<Compare> compares, List<TxnOp> then, List<TxnOp> otherwise) {
    return new Command.Txn(compares, then, otherwise);
  }

  private String value(String k) {
    byte[] v = engine.get(b(k));
    return v == null ? null : new String(v, UTF_8);
  }

  @Test
  void theBranchFollowsTheComparesOnEveryTarget() {
    put("k", "5"); // index 1
    put("k", "6"); // index 2: version 2, create 1, mod 2
    List<Compare> holding =
        List.of(
            Compare.value(b("k"), Compare.Result.EQUAL, b("6")),
            Compare.value(b("k"), Compare.Result.GREATER, b("5")),
            Compare.number(b("k"), Compare.Target.VERSION, Compare.Result.EQUAL, 2),
            Compare.number(b("k"), Compare.Target.CREATE_INDEX, Compare.Result.LESS, 2),
            Compare.number(b("k"), Compare.Target.MOD_INDEX, Compare.Result.NOT_EQUAL, 1),
            Compare.number(b("absent"), Compare.Target.VERSION, Compare.Result.EQUAL, 0));
    Reply.TxnResult yes =
        (Reply.TxnResult)
            commit(
                txn(
                    holding,
                    List.of(new TxnOp.Put(b("then"), b("1"))),
                    List.of(new TxnOp.Put(b("else"), b("1")))));
    assertThat(yes.succeeded()).isTrue();
    assertThat(value("then")).isEqualTo("1");
    assertThat(value("else")).isNull();

    // Each compare on its own, negated, fails the transaction.
    for (Compare c : holding) {
      Compare.Result negated =
          c.result() == Compare.Result.EQUAL ? Compare.Result.NOT_EQUAL : Compare.Result.EQUAL;
      Compare failing =
          c.target() == Compare.Target.VALUE
              ? Compare.value(c.key(), Compare.Result.LESS, c.value())
              : Compare.number(c.key(), c.target(), negated, c.number());
      Reply.TxnResult no =
          (Reply.TxnResult)
              commit(
                  txn(
                      List.of(failing),
                      List.of(new TxnOp.Put(b("then2"), b("x"))),
                      List.of(new TxnOp.Get(b("k")))));
      assertThat(no.succeeded()).as(failing.toString()).isFalse();
      assertThat(no.results().get(0).value()).isEqualTo(b("6"));
    }
    assertThat(value("then2")).isNull();
  }

  @Test
  void aValueCompareOnAnAbsentKeyNeverHolds() {
    for (Compare.Result r : Compare.Result.values()) {
      Reply.TxnResult t =
          (Reply.TxnResult)
              commit(txn(List.of(Compare.value(b("none"), r, b("x"))), List.of(), List.of()));
      assertThat(t.succeeded()).as(r.name()).isFalse();
    }
  }

  @Test
  void operationsApplyInOrderAndAGetSeesTheWritesBeforeIt() {
    put("a1", "old");
    put("a2", "old");
    put("b", "keep");
    Reply.TxnResult t =
        (Reply.TxnResult)
            commit(
                txn(
                    List.of(),
                    List.of(
                        new TxnOp.Get(b("a1")),
                        new TxnOp.Put(b("a1"), b("new")),
                        new TxnOp.Get(b("a1")),
                        new TxnOp.Put(b("a3"), b("x")),
                        new TxnOp.DeleteRange(b("a"), b("b")),
                        new TxnOp.Get(b("a3")),
                        new TxnOp.Put(b("a9"), b("after")),
                        new TxnOp.Delete(b("b")),
                        new TxnOp.Delete(b("b"))),
                    List.of()));
    assertThat(t.succeeded()).isTrue();
    List<Reply.OpResult> r = t.results();
    assertThat(r.get(0).value()).isEqualTo(b("old"));
    assertThat(r.get(2).value()).isEqualTo(b("new"));
    assertThat(r.get(2).version()).isEqualTo(2);
    assertThat(r.get(2).modIndex()).isEqualTo(index);
    assertThat(r.get(4).deleted()).as("a1, a2 and a3").isEqualTo(3);
    assertThat(r.get(5).value()).isNull();
    assertThat(r.get(7).deleted()).isEqualTo(1);
    assertThat(r.get(8).deleted()).isZero();
    assertThat(value("a1")).isNull();
    assertThat(value("a2")).isNull();
    assertThat(value("a3")).isNull();
    assertThat(value("a9")).isEqualTo("after");
    assertThat(value("b")).isNull();
  }

  @Test
  void aDeleteRangeOverTooManyKeysRejectsTheWholeTransaction() {
    int n = TxnApplier.MAX_RANGE_KEYS + 1;
    for (int start = 0; start < n; start += 5_000) {
      List<Command.Op> ops = new ArrayList<>();
      for (int i = start; i < Math.min(n, start + 5_000); i++) {
        ops.add(new Command.Op(b(String.format("r%06d", i)), b("v")));
      }
      commit(new Command.Batch(ops));
    }
    Reply r =
        commit(
            txn(
                List.of(),
                List.of(new TxnOp.Put(b("first"), b("x")), new TxnOp.DeleteRange(b("r"), b("s"))),
                List.of()));
    assertThat(r).isInstanceOf(Reply.Rejected.class);
    assertThat(((Reply.Rejected) r).message()).contains("at most 10000 keys");
    assertThat(value("first")).as("nothing of a rejected transaction applies").isNull();
    assertThat(value("r000000")).isEqualTo("v");
  }

  @Test
  void aRetriedTransactionAppliesOnceAndGetsItsFirstAnswer() {
    put("n", "0");
    byte[] id = b("txn-1");
    Command c =
        new Command.Identified(
            id,
            txn(
                List.of(Compare.value(b("n"), Compare.Result.EQUAL, b("0"))),
                List.of(new TxnOp.Put(b("n"), b("1")), new TxnOp.Get(b("n"))),
                List.of(new TxnOp.Get(b("n")))));
    Reply.TxnResult first = (Reply.TxnResult) commit(c);
    Reply.TxnResult retry = (Reply.TxnResult) commit(c);
    assertThat(retry.succeeded()).isTrue();
    assertThat(retry.appliedIndex()).isEqualTo(first.appliedIndex());
    assertThat(retry.results().get(1).value()).isEqualTo(b("1"));
    assertThat(value("n")).isEqualTo("1");
    assertThat(engine.getVersioned(b("n")).index()).isEqualTo(first.appliedIndex());
  }

  @Test
  void aRetryOfATransactionWithLargeGetsReadsThemAgain() {
    byte[] big = new byte[RequestRecords.MAX_STORED_VALUE + 1];
    index++;
    engine.applyCommitted(new WriteBatch().put(b("big"), big), index);
    Command c =
        new Command.Identified(
            b("txn-big"), txn(List.of(), List.of(new TxnOp.Get(b("big"))), List.of()));
    Reply.TxnResult first = (Reply.TxnResult) commit(c);
    assertThat(first.results().get(0).value()).hasSize(big.length);
    put("big", "small now");
    Reply.TxnResult retry = (Reply.TxnResult) commit(c);
    assertThat(retry.valuesOmitted()).isFalse();
    assertThat(retry.results().get(0).value()).isEqualTo(b("small now"));
  }
}
