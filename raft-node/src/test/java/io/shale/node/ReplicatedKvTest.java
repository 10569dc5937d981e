package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.node.local.LocalCluster;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three real Ratis servers over real engines, on loopback, in this JVM. */
class ReplicatedKvTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private RaftClient client;

  private void startCluster() throws IOException {
    cluster = new LocalCluster(dir, 3);
    client = cluster.client();
  }

  private void start(String id) throws IOException {
    cluster.start(id);
  }

  @AfterEach
  void stop() throws IOException {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private Reply write(Command c) throws IOException {
    RaftClientReply r =
        client.io().send(Message.valueOf(ByteString.copyFrom(CommandCodec.encode(c))));
    assertThat(r.isSuccess()).as("write %s: %s", c, r.getException()).isTrue();
    return Reply.decode(r.getMessage().getContent().toByteArray());
  }

  private Reply read(Query q) throws IOException {
    RaftClientReply r =
        client.io().sendReadOnly(Message.valueOf(ByteString.copyFrom(Query.encode(q))));
    assertThat(r.isSuccess()).as("read: %s", r.getException()).isTrue();
    return Reply.decode(r.getMessage().getContent().toByteArray());
  }

  private Reply staleRead(String node, Query q, long minIndex) throws IOException {
    RaftClientReply r =
        client
            .io()
            .sendStaleRead(
                Message.valueOf(ByteString.copyFrom(Query.encode(q))),
                minIndex,
                RaftPeerId.valueOf(node));
    assertThat(r.isSuccess()).as("stale read on %s: %s", node, r.getException()).isTrue();
    return Reply.decode(r.getMessage().getContent().toByteArray());
  }

  /** Waits until {@code node} has applied {@code index}, then reads {@code key} there. */
  private byte[] valueOn(String node, String key, long index) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      if (cluster.node(node).stateMachine().getLastAppliedTermIndex().getIndex() >= index) {
        return ((Reply.Value) staleRead(node, new Query.Get(b(key)), index)).value();
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(node + " did not apply index " + index + " in 20 s");
      }
      Thread.sleep(20);
    }
  }

  private String leader() throws Exception {
    return cluster.leader();
  }

  @Test
  void writesAreReplicatedReadableEverywhereAndSurviveTheLeadersLoss() throws Exception {
    startCluster();
    long last = 0;
    for (int i = 0; i < 100; i++) {
      List<Command.Op> ops = new ArrayList<>();
      ops.add(new Command.Op(b("k" + i), b("v" + i)));
      if (i % 10 == 9) {
        ops.add(new Command.Op(b("k" + (i - 5)), null)); // delete an earlier key in the batch
      }
      last = write(new Command.Batch(ops)).appliedIndex();
    }
    // Linearizable reads through the leader.
    assertThat(((Reply.Value) read(new Query.Get(b("k42")))).value()).isEqualTo(b("v42"));
    assertThat(((Reply.Value) read(new Query.Get(b("k4")))).value()).isNull();
    // Every replica has every write once it has applied the last index.
    for (String n : cluster.running()) {
      assertThat(valueOn(n, "k99", last)).as(n).isEqualTo(b("v99"));
      assertThat(valueOn(n, "k94", last)).as(n).isNull();
    }
    // Scan with a limit, and the more flag.
    Reply.Entries page = (Reply.Entries) read(new Query.Scan(b("k1"), b("k2"), 5, false, false));
    assertThat(page.entries())
        .extracting(kv -> new String(kv[0], StandardCharsets.UTF_8))
        .containsExactly("k1", "k10", "k11", "k12", "k13");
    assertThat(page.more()).isTrue();

    // Compare-and-set decided at apply time.
    Reply.CasResult lost =
        (Reply.CasResult)
            write(new Command.CompareAndSet(b("k1"), b("nope"), new Command.Op(b("k1"), b("x"))));
    assertThat(lost.applied()).isFalse();
    assertThat(lost.current()).isEqualTo(b("v1"));
    Reply.CasResult won =
        (Reply.CasResult)
            write(new Command.CompareAndSet(b("k1"), b("v1"), new Command.Op(b("k1"), b("x"))));
    assertThat(won.applied()).isTrue();
    assertThat(((Reply.Value) read(new Query.Get(b("k1")))).value()).isEqualTo(b("x"));
    Reply.CasResult absent =
        (Reply.CasResult)
            write(new Command.CompareAndSet(b("new"), null, new Command.Op(b("new"), b("1"))));
    assertThat(absent.applied()).isTrue();

    // The leader goes away: a new one is elected, nothing acknowledged is lost.
    String oldLeader = leader();
    cluster.stop(oldLeader);
    long afterFailover =
        write(new Command.Batch(List.of(new Command.Op(b("after"), b("failover"))))).appliedIndex();
    assertThat(afterFailover).isGreaterThan(last);
    assertThat(leader()).isNotEqualTo(oldLeader);
    assertThat(((Reply.Value) read(new Query.Get(b("k99")))).value()).isEqualTo(b("v99"));
    assertThat(((Reply.Value) read(new Query.Get(b("k1")))).value()).isEqualTo(b("x"));

    // The old leader comes back (RECOVER) and catches up.
    start(oldLeader);
    assertThat(valueOn(oldLeader, "after", afterFailover)).isEqualTo(b("failover"));
    assertThat(valueOn(oldLeader, "k1", afterFailover)).isEqualTo(b("x"));
  }

  @Test
  void aRestartedClusterKeepsItsDataAndAppliesNothingTwice() throws Exception {
    startCluster();
    long last = 0;
    for (int i = 0; i < 50; i++) {
      last =
          write(new Command.Batch(List.of(new Command.Op(b("key" + i), b("value" + i)))))
              .appliedIndex();
    }
    // An identified compare-and-set: its record must survive the restart (replayed or flushed).
    Command.Identified once =
        new Command.Identified(
            b("restart-cas"),
            new Command.CompareAndSet(b("once"), null, new Command.Op(b("once"), b("first"))));
    Reply.CasResult first = (Reply.CasResult) write(once);
    assertThat(first.applied()).isTrue();
    write(new Command.Batch(List.of(new Command.Op(b("once"), b("later")))));
    // Flush some nodes' engines (their persisted index moves), not others.
    cluster.node("n1").stateMachine().takeCheckpoint();
    client.close();
    List<String> ids = cluster.running();
    for (String id : ids) {
      cluster.stop(id);
    }
    for (String id : ids) {
      start(id);
    }
    client = cluster.client();
    // A counter by compare-and-set: applied twice it would skip a value.
    Reply.CasResult c =
        (Reply.CasResult)
            write(
                new Command.CompareAndSet(
                    b("key7"), b("value7"), new Command.Op(b("key7"), b("next"))));
    assertThat(c.applied()).isTrue();
    // The retry after the restart gets the first reply; applied again it would fail ("once" is
    // no longer absent).
    Reply.CasResult retried = (Reply.CasResult) write(once);
    assertThat(retried.applied()).isTrue();
    assertThat(retried.appliedIndex()).isEqualTo(first.appliedIndex());
    for (String id : ids) {
      assertThat(valueOn(id, "once", c.appliedIndex())).as(id).isEqualTo(b("later"));
      // Ratis started after what each engine had persisted: nothing was read back to be skipped.
      assertThat(cluster.node(id).stateMachine().entriesAlreadyApplied())
          .as("%s: entries handed over again that its engine already held", id)
          .isZero();
      assertThat(valueOn(id, "key49", last)).as(id).isEqualTo(b("value49"));
      assertThat(valueOn(id, "key7", c.appliedIndex())).as(id).isEqualTo(b("next"));
    }
  }

  @Test
  void malformedCommandsAndReservedKeysAreRefusedByName() {
    assertThatThrownBy(
            () ->
                CommandCodec.encode(
                    new Command.Batch(List.of(new Command.Op(new byte[0], b("v"))))))
        .hasMessageContaining("key is empty");
    assertThatThrownBy(
            () ->
                CommandCodec.encode(
                    new Command.Batch(List.of(new Command.Op(new byte[] {0, 1}, b("v"))))))
        .hasMessageContaining("reserved");
    byte[] ok = CommandCodec.encode(new Command.Batch(List.of(new Command.Op(b("k"), b("v")))));
    ok[1] = 9;
    assertThatThrownBy(() -> CommandCodec.decode(ok)).hasMessageContaining("version 9");
    Command.Identified id =
        new Command.Identified(
            b("r1"), new Command.CompareAndSet(b("k"), null, new Command.Op(b("k"), b("v"))));
    Command.Identified back = (Command.Identified) CommandCodec.decode(CommandCodec.encode(id));
    assertThat(back.requestId()).isEqualTo(b("r1"));
    assertThat(((Command.CompareAndSet) back.command()).then().value()).isEqualTo(b("v"));
    assertThatThrownBy(() -> new Command.Identified(new byte[65], id.command()))
        .hasMessageContaining("1 to 64 bytes");
    byte[] cut = CommandCodec.encode(new Command.Batch(List.of(new Command.Op(b("k"), b("v")))));
    assertThatThrownBy(() -> CommandCodec.decode(java.util.Arrays.copyOf(cut, cut.length - 1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * A group (several clients' batches in one entry, as the leader's group commit sends them): each
   * member gets its own reply, in order; a request id repeated within the group, or seen in an
   * earlier entry, applies once.
   */
  @Test
  void aGroupAppliesEachBatchOnceWithItsOwnReply() throws Exception {
    startCluster();
    Reply.Written earlier =
        (Reply.Written)
            write(
                new Command.Identified(
                    b("g0"), new Command.Batch(List.of(new Command.Op(b("g-old"), b("1"))))));
    Command.Group group =
        new Command.Group(
            List.of(
                new Command.Batch(List.of(new Command.Op(b("g-a"), b("1")))),
                new Command.Identified(
                    b("g1"), new Command.Batch(List.of(new Command.Op(b("g-b"), b("first"))))),
                new Command.Identified(
                    b("g1"), new Command.Batch(List.of(new Command.Op(b("g-b"), b("first"))))),
                new Command.Identified(
                    b("g0"), new Command.Batch(List.of(new Command.Op(b("g-old"), b("1"))))),
                new Command.Batch(List.of(new Command.Op(b("g-a"), null))),
                new Command.Identified(
                    b("g1"), new Command.Batch(List.of(new Command.Op(b("g-b"), b("other")))))));
    assertThat(CommandCodec.decode(CommandCodec.encode(group)))
        .isInstanceOfSatisfying(Command.Group.class, g -> assertThat(g.commands()).hasSize(6));
    Reply.Many many = (Reply.Many) write(group);
    assertThat(many.replies()).hasSize(6);
    long index = many.appliedIndex();
    assertThat(Reply.decode(many.replies().get(0)).appliedIndex()).isEqualTo(index);
    assertThat(Reply.decode(many.replies().get(2)).appliedIndex()).isEqualTo(index);
    // The retry of g0 gets the reply of its first attempt, from an earlier entry.
    assertThat(Reply.decode(many.replies().get(3)).appliedIndex())
        .isEqualTo(earlier.appliedIndex())
        .isLessThan(index);
    // The same id with another command is refused, alike on every replica.
    assertThat(Reply.decode(many.replies().get(5))).isInstanceOf(Reply.Rejected.class);
    assertThat(((Reply.Value) read(new Query.Get(b("g-b")))).value()).isEqualTo(b("first"));
    assertThat(((Reply.Value) read(new Query.Get(b("g-old")))).value()).isEqualTo(b("1"));
    assertThat(((Reply.Value) read(new Query.Get(b("g-a")))).value()).isNull();
    assertThatThrownBy(() -> new Command.Group(List.of(new Command.DeleteRange(b("a"), null))))
        .hasMessageContaining("batches only");
  }
}
