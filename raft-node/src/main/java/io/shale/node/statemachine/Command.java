package io.shale.node.statemachine;

import io.shale.node.auth.proto.AuthChange;
import java.util.List;

/**
 * A write as it travels through the Raft log: the state machine applies each committed command to
 * the engine as one atomic batch tagged with the entry's index.
 */
public sealed interface Command
    permits Command.Batch,
        Command.CompareAndSet,
        Command.DeleteRange,
        Command.Identified,
        Command.Group,
        Command.Auth,
        Command.Txn,
        Command.LeaseGrant,
        Command.LeaseRevoke,
        Command.LeaseKeepAlive {
  /**
   * One put or delete of a batch. {@code value} is null for a delete. A put attaches the key to
   * {@code lease} (0: to none, detaching it from any lease it had), which must be live.
   */
  record Op(byte[] key, byte[] value, long lease) {
    public Op {
      if (lease < 0 || (lease != 0 && value == null)) {
        throw new IllegalArgumentException("only a put attaches a key to a lease (id > 0)");
      }
    }

    /** A put (or, with a null value, a delete) of a key with no lease. */
    public Op(byte[] key, byte[] value) {
      this(key, value, 0);
    }

    public boolean isDelete() {
      return value == null;
    }
  }

  /** Puts and deletes applied together or not at all. */
  record Batch(List<Op> ops) implements Command {
    public Batch {
      if (ops.isEmpty() || ops.size() > CommandCodec.MAX_BATCH_OPS) {
        throw new IllegalArgumentException(
            "a batch holds 1 to " + CommandCodec.MAX_BATCH_OPS + " operations, got " + ops.size());
      }
    }
  }

  /**
   * Applies {@code then} (a put, or a delete when its value is null) only if the key's current
   * value equals {@code expected} (null: the key must be absent), or, when {@code expectedIndex >=
   * 0}, only if the index of the entry that last modified the key is {@code expectedIndex} (0: the
   * key must be absent; {@code expected} is then ignored).
   */
  record CompareAndSet(byte[] key, byte[] expected, long expectedIndex, Op then)
      implements Command {
    /** A compare-and-set on the value (or its absence). */
    public CompareAndSet(byte[] key, byte[] expected, Op then) {
      this(key, expected, -1, then);
    }

    public boolean comparesIndex() {
      return expectedIndex >= 0;
    }
  }

  /**
   * Deletes the first {@code maxKeys} user keys in [start, end) (end null: to the last key; an
   * empty start: from the first user key). The keys are found at apply time, in the applied state
   * every replica shares, so each replica deletes the same ones. The reply says where to resume
   * when more keys remain: a range of any size is deleted as a series of bounded entries, so that
   * no entry can take more memory or apply time than {@code maxKeys} deletions.
   */
  record DeleteRange(byte[] start, byte[] end, int maxKeys) implements Command {
    /** Keys deleted per entry unless the submitter asks for fewer. */
    public static final int DEFAULT_MAX_KEYS = 10_000;

    public DeleteRange {
      if (maxKeys < 1 || maxKeys > CommandCodec.MAX_DELETE_RANGE_KEYS) {
        throw new IllegalArgumentException(
            "a delete range deletes 1 to "
                + CommandCodec.MAX_DELETE_RANGE_KEYS
                + " keys per entry, got "
                + maxKeys);
      }
    }

    public DeleteRange(byte[] start, byte[] end) {
      this(start, end, DEFAULT_MAX_KEYS);
    }
  }

  /**
   * Several clients' writes that the leader grouped into one log entry (group commit: one Raft
   * round and one fsync per group instead of per write). Only batches, identified or not, are
   * grouped: they never read state, so applying them in order in one engine batch is the same as
   * applying them one entry each. Each gets its own reply.
   */
  record Group(List<Command> commands) implements Command {
    public Group {
      commands = List.copyOf(commands);
      if (commands.isEmpty() || commands.size() > CommandCodec.MAX_GROUP_COMMANDS) {
        throw new IllegalArgumentException(
            "a group holds 1 to "
                + CommandCodec.MAX_GROUP_COMMANDS
                + " commands, got "
                + commands.size());
      }
      for (Command c : commands) {
        Command inner = c instanceof Identified id ? id.command() : c;
        if (!(inner instanceof Batch)) {
          throw new IllegalArgumentException("a group holds batches only, got " + c);
        }
      }
    }
  }

  /**
   * A transaction: if every compare holds (or there are none), {@code then}'s operations apply,
   * else {@code otherwise}'s; either way atomically, at the entry's index, and the reply holds the
   * result of each operation of the branch taken. At most {@link CommandCodec#MAX_TXN_PARTS}
   * compares and operations in all.
   */
  record Txn(List<Compare> compares, List<TxnOp> then, List<TxnOp> otherwise) implements Command {
    public Txn {
      compares = List.copyOf(compares);
      then = List.copyOf(then);
      otherwise = List.copyOf(otherwise);
      int parts = compares.size() + then.size() + otherwise.size();
      if (parts > CommandCodec.MAX_TXN_PARTS) {
        throw new IllegalArgumentException(
            "a transaction holds at most "
                + CommandCodec.MAX_TXN_PARTS
                + " compares and operations, got "
                + parts);
      }
    }
  }

  /**
   * Grants a lease of {@code ttlMillis}; its id is the entry's index. The leader alone decides when
   * it expires, from its own clock, and then revokes it with an entry ({@code
   * io.shale.node.lease.LeaseExpiry}).
   */
  record LeaseGrant(long ttlMillis) implements Command {
    public LeaseGrant {
      if (ttlMillis < 1 || ttlMillis > CommandCodec.MAX_LEASE_TTL_MILLIS) {
        throw new IllegalArgumentException(
            "a lease's TTL is 1 to " + CommandCodec.MAX_LEASE_TTL_MILLIS + " ms, got " + ttlMillis);
      }
    }
  }

  /**
   * Revokes lease {@code id}: removes it and deletes up to {@link LeaseApplier#MAX_REVOKE_KEYS} of
   * its keys; the reply says whether more remain, and the revoker sends it again until none do.
   */
  record LeaseRevoke(long id) implements Command {}

  /**
   * Renews lease {@code id}: changes no state, but its application on the leader restarts the
   * lease's TTL there. Through the log so that any node can take it and it reaches whichever node
   * leads.
   */
  record LeaseKeepAlive(long id) implements Command {}

  /** A change to users, roles or the token key ({@link io.shale.node.auth.AuthApplier}). */
  record Auth(AuthChange change) implements Command {}

  /**
   * {@code command} under a client-chosen request id (1 to 64 bytes): a retry with the same id is
   * answered with the first attempt's reply instead of being applied again.
   */
  record Identified(byte[] requestId, Command command, byte[] commandHash) implements Command {
    /** {@code command} under {@code requestId}; its hash is computed when it is applied. */
    public Identified(byte[] requestId, Command command) {
      this(requestId, command, null);
    }

    /**
     * {@code commandHash}, when not null, is the SHA-256 of {@code command}'s encoded form, taken
     * by the decoder from the entry's bytes so that applying it need not encode the command again.
     */
    public Identified {
      if (requestId.length < 1 || requestId.length > 64) {
        throw new IllegalArgumentException(
            "request id must be 1 to 64 bytes, got " + requestId.length);
      }
      if (command instanceof Identified) {
        throw new IllegalArgumentException("a request id may not wrap another");
      }
    }
  }
}
