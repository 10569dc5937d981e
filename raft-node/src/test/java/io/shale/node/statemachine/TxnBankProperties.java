package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The bank-transfer invariant: clients read two balances, then submit a transfer as a transaction
 * conditioned on both accounts' modification indexes; transfers from any interleaving of stale
 * reads and commits apply or not as wholes, so money is neither made nor lost and no balance goes
 * negative, and a transfer applies exactly when neither account changed since it was read.
 */
class TxnBankProperties {
  private static final int ACCOUNTS = 4;
  private static final long START = 100;

  /** One step of a client: read two accounts now, commit a transfer some steps later. */
  record Transfer(int from, int to, long amount, int readAhead) {}

  @Provide
  Arbitrary<List<Transfer>> transfers() {
    return Combinators.combine(
            Arbitraries.integers().between(0, ACCOUNTS - 1),
            Arbitraries.integers().between(0, ACCOUNTS - 1),
            Arbitraries.longs().between(1, 150),
            Arbitraries.integers().between(0, 3))
        .as(Transfer::new)
        .filter(t -> t.from() != t.to())
        .list()
        .ofMinSize(1)
        .ofMaxSize(40);
  }

  private static byte[] account(int i) {
    return ("acct-" + i).getBytes(UTF_8);
  }

  private static byte[] amount(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  @Property(tries = 60)
  void transfersConserveMoneyWhateverTheInterleaving(@ForAll("transfers") List<Transfer> steps)
      throws IOException {
    Path dir = Files.createTempDirectory("bank");
    CommandApplier applier = new CommandApplier();
    try (Engine engine = Engine.open(dir, EngineOptions.defaults())) {
      long[] index = {0};
      java.util.function.Function<Command, Reply> commit =
          c -> {
            index[0]++;
            CommandApplier.Applied a = applier.apply(engine, c, index[0]);
            if (!a.batch().isEmpty()) {
              engine.applyCommitted(a.batch(), index[0]);
            }
            return Reply.decode(a.reply());
          };
      List<Command.Op> open = new ArrayList<>();
      for (int i = 0; i < ACCOUNTS; i++) {
        open.add(new Command.Op(account(i), amount(START)));
      }
      assertThat(commit.apply(new Command.Batch(open))).isInstanceOf(Reply.Written.class);

      // Reads are taken up front in a window: transfer i read its accounts readAhead steps early.
      record Read(long fromBalance, long fromMod, long toBalance, long toMod) {}
      List<Read> reads = new ArrayList<>();
      int applied = 0;
      for (int i = 0; i < steps.size(); i++) {
        // Read for every transfer whose read point is now, then commit transfer i.
        while (reads.size() < steps.size()
            && reads.size()
                <= i + steps.get(Math.min(steps.size() - 1, reads.size())).readAhead()) {
          Transfer t = steps.get(reads.size());
          var from = engine.getVersioned(account(t.from()));
          var to = engine.getVersioned(account(t.to()));
          reads.add(
              new Read(
                  ByteBuffer.wrap(from.value()).getLong(),
                  from.index(),
                  ByteBuffer.wrap(to.value()).getLong(),
                  to.index()));
        }
        Transfer t = steps.get(i);
        Read r = reads.get(i);
        if (r.fromBalance() < t.amount()) {
          continue; // the client sees too little money and does not try
        }
        long fromModNow = engine.getVersioned(account(t.from())).index();
        long toModNow = engine.getVersioned(account(t.to())).index();
        Reply.TxnResult result =
            (Reply.TxnResult)
                commit.apply(
                    new Command.Txn(
                        List.of(
                            Compare.number(
                                account(t.from()),
                                Compare.Target.MOD_INDEX,
                                Compare.Result.EQUAL,
                                r.fromMod()),
                            Compare.number(
                                account(t.to()),
                                Compare.Target.MOD_INDEX,
                                Compare.Result.EQUAL,
                                r.toMod())),
                        List.of(
                            new TxnOp.Put(account(t.from()), amount(r.fromBalance() - t.amount())),
                            new TxnOp.Put(account(t.to()), amount(r.toBalance() + t.amount()))),
                        List.of()));
        boolean unchanged = fromModNow == r.fromMod() && toModNow == r.toMod();
        assertThat(result.succeeded()).isEqualTo(unchanged);
        applied += result.succeeded() ? 1 : 0;
      }
      long total = 0;
      for (int i = 0; i < ACCOUNTS; i++) {
        long balance = ByteBuffer.wrap(engine.get(account(i))).getLong();
        assertThat(balance).isNotNegative();
        total += balance;
      }
      assertThat(total).as("after %d applied transfers", applied).isEqualTo(ACCOUNTS * START);
    }
  }
}
