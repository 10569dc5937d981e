package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lease commands through the applier on a real engine: grant, attach, detach, revoke, keep-alive.
 */
class LeaseApplierTest extends ApplierFixture {

  private long grant(long ttlMillis) {
    Reply.LeaseResult r = (Reply.LeaseResult) commit(new Command.LeaseGrant(ttlMillis));
    assertThat(r.outcome()).isEqualTo(Reply.LeaseOutcome.GRANTED);
    return r.id();
  }

  private Reply put(String k, String v, long lease) {
    return commit(new Command.Batch(List.of(new Command.Op(b(k), b(v), lease))));
  }

  private String value(String k) {
    byte[] v = engine.get(b(k));
    return v == null ? null : new String(v, UTF_8);
  }

  private Reply.LeaseResult revoke(long id) {
    return (Reply.LeaseResult) commit(new Command.LeaseRevoke(id));
  }

  @Test
  void aLeaseIdIsItsGrantsIndexAndRevokingItDeletesItsKeysOnly() {
    long a = grant(5_000);
    assertThat(a).isEqualTo(index);
    long other = grant(5_000);
    put("a/1", "x", a);
    put("a/2", "x", a);
    put("b", "x", other);
    put("plain", "x", 0);
    assertThat(LeaseRecords.attachedKeys(engine, a, 10))
        .extracting(k -> new String(k, UTF_8))
        .containsExactly("a/1", "a/2");

    Reply.LeaseResult r = revoke(a);
    assertThat(r.outcome()).isEqualTo(Reply.LeaseOutcome.REVOKED);
    assertThat(r.deleted()).isEqualTo(2);
    assertThat(r.more()).isFalse();
    assertThat(value("a/1")).isNull();
    assertThat(value("a/2")).isNull();
    assertThat(value("b")).isEqualTo("x");
    assertThat(value("plain")).isEqualTo("x");
    assertThat(LeaseRecords.ttlMillis(engine, a)).isEqualTo(-1);
    assertThat(LeaseRecords.attachedKeys(engine, a, 10)).isEmpty();
    assertThat(LeaseRecords.count(engine)).isEqualTo(1);
    // A second revoke, a keep-alive and a put on it all find it gone.
    assertThat(revoke(a).outcome()).isEqualTo(Reply.LeaseOutcome.NOT_FOUND);
    assertThat(((Reply.LeaseResult) commit(new Command.LeaseKeepAlive(a))).outcome())
        .isEqualTo(Reply.LeaseOutcome.NOT_FOUND);
  }

  @Test
  void aPutOnALeaseThatDoesNotLiveWritesNothingOfItsBatch() {
    long live = grant(5_000);
    Reply r =
        commit(
            new Command.Batch(
                List.of(
                    new Command.Op(b("first"), b("1"), live),
                    new Command.Op(b("second"), b("2"), live + 100))));
    assertThat(r).isInstanceOf(Reply.LeaseResult.class);
    assertThat(((Reply.LeaseResult) r).outcome()).isEqualTo(Reply.LeaseOutcome.NOT_FOUND);
    assertThat(((Reply.LeaseResult) r).id()).isEqualTo(live + 100);
    assertThat(value("first")).isNull();
    assertThat(value("second")).isNull();
  }

  @Test
  void aPutWithAnotherLeaseOrNoneMovesTheKeyAndADeleteDetachesIt() {
    long a = grant(5_000);
    long c = grant(5_000);
    put("k", "1", a);
    put("k", "2", c); // moves to c
    put("m", "1", a);
    put("m", "2", 0); // detached: survives a's revoke
    put("d", "1", a);
    commit(new Command.Batch(List.of(new Command.Op(b("d"), null))));
    assertThat(LeaseRecords.attachedKeys(engine, a, 10)).isEmpty();
    assertThat(revoke(a).deleted()).isZero();
    assertThat(value("k")).isEqualTo("2");
    assertThat(value("m")).isEqualTo("2");
    assertThat(revoke(c).deleted()).isEqualTo(1);
    assertThat(value("k")).isNull();
  }

  @Test
  void aTransactionAttachesKeysAndFailsWholeOnAMissingLease() {
    long a = grant(5_000);
    Reply.TxnResult ok =
        (Reply.TxnResult)
            commit(
                new Command.Txn(
                    List.of(
                        Compare.number(
                            b("lock"), Compare.Target.CREATE_INDEX, Compare.Result.EQUAL, 0)),
                    List.of(new TxnOp.Put(b("lock"), b("me"), a)),
                    List.of(new TxnOp.Get(b("lock")))));
    assertThat(ok.succeeded()).isTrue();
    Reply missing =
        commit(
            new Command.Txn(
                List.of(),
                List.of(new TxnOp.Put(b("x"), b("1")), new TxnOp.Put(b("y"), b("1"), a + 7)),
                List.of()));
    assertThat(((Reply.LeaseResult) missing).outcome()).isEqualTo(Reply.LeaseOutcome.NOT_FOUND);
    assertThat(value("x")).isNull();
    assertThat(revoke(a).deleted()).isEqualTo(1);
    assertThat(value("lock")).isNull();
  }

  @Test
  void aLeaseOfManyKeysIsRevokedOverSeveralEntriesAndTheirEventsSaySo() {
    long a = grant(5_000);
    int keys = LeaseApplier.MAX_REVOKE_KEYS + 5;
    List<Command.Op> ops = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      ops.add(new Command.Op(b(String.format("k%06d", i)), b("v"), a));
    }
    commit(new Command.Batch(ops));
    index++;
    CommandApplier.Applied first = applier.apply(engine, new Command.LeaseRevoke(a), index);
    engine.applyCommitted(first.batch(), index);
    Reply.LeaseResult r = (Reply.LeaseResult) Reply.decode(first.reply());
    assertThat(r.deleted()).isEqualTo(LeaseApplier.MAX_REVOKE_KEYS);
    assertThat(r.more()).isTrue();
    assertThat(first.leaseEvents())
        .containsExactly(new LeaseEvent(LeaseEvent.Kind.REVOKE_UNFINISHED, a, 5_000));
    assertThat(first.changes()).hasSize(LeaseApplier.MAX_REVOKE_KEYS);
    assertThat(LeaseTable.load(engine).unfinishedRevokes()).containsExactly(a);
    assertThat(LeaseTable.load(engine).ttls()).doesNotContainKey(a);

    Reply.LeaseResult rest = revoke(a);
    assertThat(rest.deleted()).isEqualTo(5);
    assertThat(rest.more()).isFalse();
    assertThat(LeaseTable.load(engine).unfinishedRevokes()).isEmpty();
    assertThat(engine.get(b("k000000"))).isNull();
  }

  @Test
  void grantAndKeepAliveTellTheExpiryClockAndWriteNothingForAKeepAlive() {
    index++;
    CommandApplier.Applied g = applier.apply(engine, new Command.LeaseGrant(3_000), index);
    engine.applyCommitted(g.batch(), index);
    assertThat(g.leaseEvents())
        .containsExactly(new LeaseEvent(LeaseEvent.Kind.GRANTED, index, 3_000));
    long id = index;
    index++;
    CommandApplier.Applied k = applier.apply(engine, new Command.LeaseKeepAlive(id), index);
    assertThat(k.batch().isEmpty()).isTrue();
    assertThat(k.leaseEvents())
        .containsExactly(new LeaseEvent(LeaseEvent.Kind.KEPT_ALIVE, id, 3_000));
    assertThat(LeaseTable.load(engine).ttls()).containsEntry(id, 3_000L);
  }

  @Test
  void aRetriedGrantGrantsOnce() {
    byte[] requestId = b("grant-1");
    Reply.LeaseResult first =
        (Reply.LeaseResult)
            commit(new Command.Identified(requestId, new Command.LeaseGrant(4_000)));
    Reply.LeaseResult again =
        (Reply.LeaseResult)
            commit(new Command.Identified(requestId, new Command.LeaseGrant(4_000)));
    assertThat(again.id()).isEqualTo(first.id());
    assertThat(LeaseRecords.count(engine)).isEqualTo(1);
  }
}
