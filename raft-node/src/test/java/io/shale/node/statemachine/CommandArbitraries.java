package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.protobuf.ByteString;
import io.shale.node.auth.proto.AuthChange;
import io.shale.node.auth.proto.RolePermission;
import io.shale.node.auth.proto.StoredPermission;
import io.shale.node.auth.proto.StoredUser;
import io.shale.node.auth.proto.UserRole;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Random commands over a few keys, so that generated histories touch the same keys often. */
final class CommandArbitraries {
  private CommandArbitraries() {}

  private static Arbitrary<byte[]> keys() {
    return Arbitraries.of("a", "b", "c", "d").map(s -> s.getBytes(UTF_8));
  }

  private static Arbitrary<byte[]> values() {
    return Arbitraries.strings().alpha().ofMaxLength(4).map(s -> s.getBytes(UTF_8));
  }

  /** A range {start, end} over the same keys; end null (to the last key) now and then. */
  private static Arbitrary<byte[][]> ranges() {
    return keys()
        .flatMap(
            s ->
                keys()
                    .injectNull(0.3)
                    .filter(e -> e == null || Arrays.compare(s, e) < 0)
                    .map(e -> new byte[][] {s, e}));
  }

  /** Lease ids among the first entries' indexes: some name granted leases, some do not. */
  private static Arbitrary<Long> leaseIds() {
    return Arbitraries.longs().between(1, 12);
  }

  private static Arbitrary<Command.Op> ops() {
    return Arbitraries.oneOf(
        keys().flatMap(k -> values().map(v -> new Command.Op(k, v))),
        keys().flatMap(k -> values().flatMap(v -> leaseIds().map(l -> new Command.Op(k, v, l)))),
        keys().map(k -> new Command.Op(k, null)));
  }

  /** A lease grant, revoke or keep-alive. */
  static Arbitrary<Command> lease() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(1, 60_000).map(Command.LeaseGrant::new),
        leaseIds().map(Command.LeaseRevoke::new),
        leaseIds().map(Command.LeaseKeepAlive::new));
  }

  static Arbitrary<Command> batch() {
    return ops().list().ofMinSize(1).ofMaxSize(3).map(Command.Batch::new);
  }

  /**
   * A batch, a compare-and-set (on a value or a modification index), a bounded delete range, a
   * transaction or a lease command.
   */
  static Arbitrary<Command> plain() {
    Arbitrary<Command> casValue =
        keys()
            .flatMap(
                k ->
                    values()
                        .injectNull(0.3)
                        .flatMap(
                            exp -> ops().map(then -> new Command.CompareAndSet(k, exp, then))));
    Arbitrary<Command> casIndex =
        keys()
            .flatMap(
                k ->
                    Arbitraries.longs()
                        .between(0, 12)
                        .flatMap(
                            i -> ops().map(then -> new Command.CompareAndSet(k, null, i, then))));
    Arbitrary<Command> deleteRange =
        Combinators.combine(ranges(), Arbitraries.integers().between(1, 3))
            .as((r, max) -> new Command.DeleteRange(r[0], r[1], max));
    return Arbitraries.oneOf(batch(), casValue, casIndex, deleteRange, txn(), lease());
  }

  /** A transaction over the same few keys: compares of every target, ops of every kind. */
  static Arbitrary<Command> txn() {
    Arbitrary<Compare> compares =
        Arbitraries.oneOf(
            Combinators.combine(keys(), Arbitraries.of(Compare.Result.class), values())
                .as(Compare::value),
            Combinators.combine(
                    keys(),
                    Arbitraries.of(
                        Compare.Target.VERSION,
                        Compare.Target.CREATE_INDEX,
                        Compare.Target.MOD_INDEX),
                    Arbitraries.of(Compare.Result.class),
                    Arbitraries.longs().between(0, 6))
                .as(Compare::number));
    Arbitrary<TxnOp> ops =
        Arbitraries.oneOf(
            Combinators.combine(keys(), values()).as(TxnOp.Put::new),
            Combinators.combine(keys(), values(), leaseIds()).as(TxnOp.Put::new),
            keys().map(TxnOp.Delete::new),
            keys().map(TxnOp.Get::new),
            ranges().map(r -> new TxnOp.DeleteRange(r[0], r[1])));
    return Combinators.combine(
            compares.list().ofMaxSize(2), ops.list().ofMaxSize(3), ops.list().ofMaxSize(3))
        .as(Command.Txn::new);
  }

  /** A plain command under a request id. */
  static Arbitrary<Command> identified() {
    return identifiedAmong(1_000_000);
  }

  /** Identified commands whose ids are among {@code ids} (few: ids get reused). */
  static Arbitrary<Command> identifiedAmong(int ids) {
    return Arbitraries.integers()
        .between(0, ids - 1)
        .flatMap(n -> plain().map(c -> new Command.Identified(("id-" + n).getBytes(UTF_8), c)));
  }

  /** A change to users and roles, over a few names so that changes meet each other. */
  static Arbitrary<Command> auth() {
    Arbitrary<String> names = Arbitraries.of("alice", "bob", "root", "ops", "bad name", "");
    Arbitrary<StoredPermission> permissions =
        Combinators.combine(
                Arbitraries.integers().between(0, 4),
                Arbitraries.of("", "a", "b", "app/"),
                Arbitraries.of("", "a", "c", "app0"))
            .as(
                (type, start, end) ->
                    StoredPermission.newBuilder()
                        .setType(type)
                        .setStart(ByteString.copyFromUtf8(start))
                        .setEnd(ByteString.copyFromUtf8(end))
                        .build());
    Arbitrary<AuthChange> changes =
        Arbitraries.oneOf(
            names.map(
                n ->
                    AuthChange.newBuilder().setUserAdd(StoredUser.newBuilder().setName(n)).build()),
            names.map(n -> AuthChange.newBuilder().setUserDelete(n).build()),
            names.map(n -> AuthChange.newBuilder().setRoleAdd(n).build()),
            names.map(n -> AuthChange.newBuilder().setRoleDelete(n).build()),
            Combinators.combine(names, names)
                .as(
                    (u, r) ->
                        AuthChange.newBuilder()
                            .setUserGrantRole(UserRole.newBuilder().setUser(u).setRole(r))
                            .build()),
            Combinators.combine(names, names)
                .as(
                    (u, r) ->
                        AuthChange.newBuilder()
                            .setUserRevokeRole(UserRole.newBuilder().setUser(u).setRole(r))
                            .build()),
            Combinators.combine(names, permissions)
                .as(
                    (r, p) ->
                        AuthChange.newBuilder()
                            .setRoleGrant(RolePermission.newBuilder().setRole(r).setPermission(p))
                            .build()),
            Arbitraries.bytes()
                .array(byte[].class)
                .ofMinSize(31)
                .ofMaxSize(33)
                .map(k -> AuthChange.newBuilder().setTokenKey(ByteString.copyFrom(k)).build()));
    return changes.map(Command.Auth::new);
  }

  /** A group commit: batches, some under request ids (what the node's group commit writes). */
  static Arbitrary<Command> group() {
    Arbitrary<Command> member =
        Arbitraries.oneOf(
            batch(),
            Arbitraries.integers()
                .between(0, 1_000_000)
                .flatMap(
                    n -> batch().map(b -> new Command.Identified(("g-" + n).getBytes(UTF_8), b))));
    return member.list().ofMinSize(1).ofMaxSize(4).map(Command.Group::new);
  }
}
