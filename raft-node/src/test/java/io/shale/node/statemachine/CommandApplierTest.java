package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The applier on a real engine, without Ratis: commands in, batches and replies out. */
class CommandApplierTest {
  private final CommandApplier applier = new CommandApplier();
  private Path dir;
  private Engine engine;
  private long index;

  @BeforeEach
  void open() throws IOException {
    dir = Files.createTempDirectory("applier");
    engine = Engine.open(dir, EngineOptions.defaults());
  }

  @AfterEach
  void close() throws IOException {
    engine.close();
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  /** Apply as the state machine does: build, then apply the batch at the next index. */
  private Reply commit(Command c) {
    index++;
    CommandApplier.Applied a = applier.apply(engine, c, index);
    if (!a.batch().isEmpty()) {
      engine.applyCommitted(a.batch(), index);
    }
    return Reply.decode(a.reply());
  }

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
    assertThat(a.batch().size()).isEqualTo(1);
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
