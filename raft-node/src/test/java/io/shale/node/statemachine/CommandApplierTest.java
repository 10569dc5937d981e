package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The applier on a real engine, without Ratis: commands in, batches and replies out. */
class CommandApplierTest extends ApplierFixture {

  private static Command put(String k, String v) {
    return new Command.Batch(List.of(new Command.Op(b(k), b(v))));
  }

  @Test
  void aBatchWritesItsOperationsAndRepliesWithItsIndex() {
    Reply r =
        commit(
            new Command.Batch(
                List.of(
                    new Command.Op(b("a"), b("1")),
                    new Command.Op(b("b"), b("2")),
                    new Command.Op(b("a"), null))));
    assertThat(r).isEqualTo(new Reply.Written(1));
    assertThat(engine.get(b("a"))).isNull();
    assertThat(engine.get(b("b"))).isEqualTo(b("2"));
  }

  @Test
  void theApplierItselfWritesNothing() {
    CommandApplier.Applied a = applier.apply(engine, put("k", "v"), 1);
    assertThat(a.batch().size()).as("the value and its revision record").isEqualTo(2);
    assertThat(engine.get(b("k"))).isNull();
  }

  @Test
  void compareAndSetOnValueWritesOnlyWhenTheValueMatches() {
    commit(put("k", "old"));
    Reply miss =
        commit(new Command.CompareAndSet(b("k"), b("other"), new Command.Op(b("k"), b("new"))));
    assertThat(miss)
        .isInstanceOfSatisfying(
            Reply.CasResult.class,
            c -> {
              assertThat(c.applied()).isFalse();
              assertThat(c.current()).isEqualTo(b("old"));
              assertThat(c.modIndex()).isEqualTo(1);
            });
    Reply hit =
        commit(new Command.CompareAndSet(b("k"), b("old"), new Command.Op(b("k"), b("new"))));
    assertThat(hit)
        .isInstanceOfSatisfying(
            Reply.CasResult.class,
            c -> {
              assertThat(c.applied()).isTrue();
              assertThat(c.modIndex()).isEqualTo(3);
            });
    assertThat(engine.get(b("k"))).isEqualTo(b("new"));
  }

  private Reply.Value get(String k) {
    return (Reply.Value) new QueryHandler(4 << 20).answer(engine, index, new Query.Get(b(k)));
  }

  @Test
  void eachKeyKeepsItsCreateIndexAndVersionUntilDeleted() {
    commit(put("k", "1")); // index 1
    commit(put("other", "x"));
    commit(put("k", "2")); // index 3
    assertThat(get("k")).usingRecursiveComparison().isEqualTo(new Reply.Value(3, b("2"), 3, 1, 2));
    commit(new Command.Batch(List.of(new Command.Op(b("k"), null)))); // index 4
    assertThat(get("k")).usingRecursiveComparison().isEqualTo(Reply.Value.absent(4));
    commit(put("k", "3")); // index 5: created afresh
    assertThat(get("k").createIndex()).isEqualTo(5);
    assertThat(get("k").version()).isEqualTo(1);
    // Two puts of one key in one group entry count twice; a delete range drops the revisions.
    commit(new Command.Group(List.of(put("k", "4"), put("k", "5")))); // index 6
    assertThat(get("k")).usingRecursiveComparison().isEqualTo(new Reply.Value(6, b("5"), 6, 5, 3));
    commit(new Command.DeleteRange(b("a"), b("z"))); // index 7
    commit(put("k", "6")); // index 8
    assertThat(get("k")).usingRecursiveComparison().isEqualTo(new Reply.Value(8, b("6"), 8, 8, 1));
    assertThat(get("other")).usingRecursiveComparison().isEqualTo(Reply.Value.absent(8));
  }

  @Test
  void compareAndSetKeepsRevisionsToo() {
    commit(put("k", "1"));
    commit(new Command.CompareAndSet(b("k"), b("1"), new Command.Op(b("k"), b("2"))));
    assertThat(get("k")).usingRecursiveComparison().isEqualTo(new Reply.Value(2, b("2"), 2, 1, 2));
  }

  @Test
  void aKeyWrittenBeforeRevisionsWereKeptReadsAsCreatedByItsLastWrite() {
    // As a node before revisions wrote it: the value alone.
    index++;
    engine.applyCommitted(new io.shale.engine.WriteBatch().put(b("old"), b("v")), index);
    assertThat(get("old"))
        .usingRecursiveComparison()
        .isEqualTo(new Reply.Value(1, b("v"), 1, 1, 1));
  }

  @Test
  void compareAndSetOnModificationIndexAndAbsence() {
    Reply create =
        commit(new Command.CompareAndSet(b("k"), null, 0, new Command.Op(b("k"), b("v1"))));
    assertThat(((Reply.CasResult) create).applied()).isTrue();
    Reply stale =
        commit(new Command.CompareAndSet(b("k"), null, 0, new Command.Op(b("k"), b("v2"))));
    assertThat(((Reply.CasResult) stale).applied()).isFalse();
    Reply byIndex =
        commit(new Command.CompareAndSet(b("k"), null, 1, new Command.Op(b("k"), null)));
    assertThat(byIndex)
        .isInstanceOfSatisfying(
            Reply.CasResult.class,
            c -> {
              assertThat(c.applied()).isTrue();
              assertThat(c.modIndex()).isZero(); // deleted
            });
    assertThat(engine.get(b("k"))).isNull();
  }

  @Test
  void aRetriedRequestIdGetsTheFirstReplyAndAppliesNothing() {
    byte[] id = b("request-1");
    Reply first =
        commit(
            new Command.Identified(
                id, new Command.CompareAndSet(b("k"), null, new Command.Op(b("k"), b("v")))));
    commit(put("k", "changed"));
    CommandApplier.Applied retry =
        applier.apply(
            engine,
            new Command.Identified(
                id, new Command.CompareAndSet(b("k"), null, new Command.Op(b("k"), b("v")))),
            3);
    assertThat(retry.batch().isEmpty()).isTrue();
    assertThat(Reply.decode(retry.reply())).usingRecursiveComparison().isEqualTo(first);
  }

  @Test
  void aRequestIdRepeatedInOneGroupAppliesOnce() {
    byte[] id = b("twice");
    Command once = new Command.Identified(id, put("counter", "x"));
    Reply r = commit(new Command.Group(List.of(once, put("other", "y"), once)));
    Reply.Many many = (Reply.Many) r;
    assertThat(many.replies()).hasSize(3);
    assertThat(many.replies().get(2)).isEqualTo(many.replies().get(0));
  }

  @Test
  void deleteRangeDeletesUserKeysOnlyNeverTheNodesRecords() {
    commit(new Command.Identified(b("id"), put("a1", "x")));
    commit(put("a2", "y"));
    commit(put("b1", "z"));
    commit(new Command.DeleteRange(new byte[0], null));
    assertThat(userKeys()).isEmpty();
    // The request record of the first write (a key beginning with byte 0) is still there.
    assertThat(engine.get(RequestRecords.lookupKey(b("id")))).isNotNull();
  }

  @Test
  void deleteRangeStopsBeforeItsEnd() {
    commit(put("a1", "x"));
    commit(put("a2", "y"));
    commit(put("b1", "z"));
    commit(new Command.DeleteRange(b("a"), b("a2")));
    assertThat(userKeys()).containsExactly("a2", "b1");
  }

  @Test
  void deleteRangeDeletesAtMostItsBoundAndSaysWhereToResume() {
    for (int i = 0; i < 25; i++) {
      commit(put(String.format("k%02d", i), "v"));
    }
    Reply.RangeDeleted first =
        (Reply.RangeDeleted) commit(new Command.DeleteRange(b("k"), null, 10));
    assertThat(first.deleted()).isEqualTo(10);
    assertThat(first.resumeFrom()).isEqualTo(b("k10"));
    assertThat(userKeys()).hasSize(15).first().isEqualTo("k10");
    Reply.RangeDeleted second =
        (Reply.RangeDeleted) commit(new Command.DeleteRange(first.resumeFrom(), null, 10));
    Reply.RangeDeleted last =
        (Reply.RangeDeleted) commit(new Command.DeleteRange(second.resumeFrom(), null, 10));
    assertThat(last.deleted()).isEqualTo(5);
    assertThat(last.resumeFrom()).isNull();
    assertThat(userKeys()).isEmpty();
  }

  @Test
  void aRequestIdReusedForAnotherCommandIsRejectedAndAppliesNothing() {
    byte[] id = b("request-1");
    commit(new Command.Identified(id, put("k", "v1")));
    CommandApplier.Applied other =
        applier.apply(engine, new Command.Identified(id, put("k", "v2")), 2);
    assertThat(other.batch().isEmpty()).isTrue();
    assertThat(Reply.decode(other.reply()))
        .isInstanceOfSatisfying(
            Reply.Rejected.class, r -> assertThat(r.message()).contains("request id already used"));
    // The same id twice in one group, with different commands: the second is rejected.
    Reply.Many many =
        (Reply.Many)
            commit(
                new Command.Group(
                    List.of(
                        new Command.Identified(b("g"), put("x", "1")),
                        new Command.Identified(b("g"), put("x", "2")))));
    assertThat(Reply.decode(many.replies().get(1))).isInstanceOf(Reply.Rejected.class);
    assertThat(engine.get(b("x"))).isEqualTo(b("1"));
  }

  @Test
  void aLargeCompareAndSetReplyIsNotStoredAndARetryReadsTheValueAgain() {
    byte[] big = new byte[RequestRecords.MAX_STORED_VALUE + 1];
    java.util.Arrays.fill(big, (byte) 7);
    commit(new Command.Batch(List.of(new Command.Op(b("k"), big))));
    Command cas =
        new Command.Identified(
            b("cas"), new Command.CompareAndSet(b("k"), b("nope"), new Command.Op(b("k"), b("v"))));
    Reply.CasResult first = (Reply.CasResult) commit(cas);
    assertThat(first.applied()).isFalse();
    assertThat(first.current()).isEqualTo(big);
    byte[] record = engine.get(RequestRecords.lookupKey(b("cas")));
    assertThat(record.length).isLessThan(200);
    Reply.CasResult retried = (Reply.CasResult) commit(cas);
    assertThat(retried.applied()).isFalse();
    assertThat(retried.current()).isEqualTo(big);
    assertThat(retried.modIndex()).isEqualTo(first.modIndex());
    assertThat(retried.appliedIndex()).isEqualTo(first.appliedIndex());
  }

  @Test
  void expiryNeverDeletesARecordWrittenAfreshUnderAnExpiredId() {
    byte[] id = b("reused");
    long firstAt = 1;
    index = firstAt - 1;
    commit(new Command.Identified(id, put("k", "1")));
    // The next expiry run past the retention window, with the same id written again in that entry.
    long expiryIndex =
        ((firstAt + RequestRecords.RETAIN_ENTRIES) / RequestRecords.EXPIRY_EVERY + 1)
            * RequestRecords.EXPIRY_EVERY;
    index = expiryIndex - 1;
    commit(new Command.Identified(id, put("k", "2")));
    assertThat(engine.get(b("k"))).isEqualTo(b("2"));
    RequestRecords.Record fresh = RequestRecords.find(engine, id, expiryIndex + 1);
    assertThat(fresh).isNotNull();
    assertThat(fresh.index()).isEqualTo(expiryIndex);
    // A retry of the fresh write is answered, not applied again.
    CommandApplier.Applied retry =
        applier.apply(engine, new Command.Identified(id, put("k", "2")), expiryIndex + 1);
    assertThat(retry.batch().isEmpty()).isTrue();
  }

  @Test
  void aCommandThatFailsWhileApplyingIsRejectedNotThrown() throws IOException {
    commit(put("k", "v"));
    engine.close();
    CommandApplier.Applied a =
        applier.apply(
            engine, new Command.CompareAndSet(b("k"), null, new Command.Op(b("k"), b("v"))), 2);
    assertThat(a.batch().isEmpty()).isTrue();
    assertThat(Reply.decode(a.reply()))
        .isInstanceOfSatisfying(
            Reply.Rejected.class, r -> assertThat(r.message()).contains("could not be applied"));
    engine = Engine.open(engine.directory(), EngineOptions.defaults());
  }

  private List<String> userKeys() {
    List<String> keys = new ArrayList<>();
    try (ScanIterator it =
        engine.scan(new ScanOptions(new byte[] {1}, null, Long.MAX_VALUE, false, true))) {
      while (it.next()) {
        keys.add(new String(it.key(), UTF_8));
      }
    }
    return keys;
  }
}
