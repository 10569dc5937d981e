package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Changes carry each key's previous value and revisions when the applier is asked to. */
class PreviousValuesTest extends ApplierFixture {

  private List<KeyChange> changes(Command c) {
    index++;
    CommandApplier.Applied a = applier.apply(engine, c, index);
    if (!a.batch().isEmpty()) {
      engine.applyCommitted(a.batch(), index);
    }
    return a.changes();
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  @Test
  void offByDefaultThenEveryKindOfWriteSaysWhatWasThere() {
    assertThat(
            changes(new Command.Batch(List.of(new Command.Op(b("k"), b("v1"))))).get(0).previous())
        .isNull();
    applier.capturePreviousValues(true);
    // A put over v1 (written at index 1).
    KeyChange second = changes(new Command.Batch(List.of(new Command.Op(b("k"), b("v2"))))).get(0);
    assertThat(text(second.previous().value())).isEqualTo("v1");
    assertThat(second.previous().modIndex()).isEqualTo(1);
    assertThat(second.previous().createIndex()).isEqualTo(1);
    assertThat(second.previous().version()).isEqualTo(1);
    // Two writes of one key in one entry: the second's previous is the first's value.
    List<KeyChange> both =
        changes(
            new Command.Batch(
                List.of(new Command.Op(b("k"), b("v3")), new Command.Op(b("k"), b("v4")))));
    assertThat(text(both.get(0).previous().value())).isEqualTo("v2");
    assertThat(text(both.get(1).previous().value())).isEqualTo("v3");
    assertThat(both.get(1).previous().modIndex()).isEqualTo(index);
    // A put of a new key has none; a delete has the deleted value; a range delete each key's.
    assertThat(
            changes(new Command.Batch(List.of(new Command.Op(b("m"), b("x"))))).get(0).previous())
        .isNull();
    KeyChange deleted = changes(new Command.Batch(List.of(new Command.Op(b("k"), null)))).get(0);
    assertThat(deleted.isDelete()).isTrue();
    assertThat(text(deleted.previous().value())).isEqualTo("v4");
    List<KeyChange> range = changes(new Command.DeleteRange(b("a"), b("z")));
    assertThat(range).extracting(c -> text(c.previous().value())).containsExactly("x");
    // A transaction's put too.
    changes(new Command.Batch(List.of(new Command.Op(b("t"), b("before")))));
    List<KeyChange> txn =
        changes(new Command.Txn(List.of(), List.of(new TxnOp.Put(b("t"), b("after"))), List.of()));
    assertThat(text(txn.get(0).previous().value())).isEqualTo("before");
    assertThat(txn.get(0).bytes()).isEqualTo(1 + 5 + 6);
  }
}
