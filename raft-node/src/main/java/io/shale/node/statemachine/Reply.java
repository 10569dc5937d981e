package io.shale.node.statemachine;

import io.shale.engine.pressure.WritePressure;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the state machine answers, with the applied index the answer reflects.
 *
 * <pre>
 *   reply  = applied-index:int64, kind, body
 *   WRITE  = (nothing)                    a batch was applied at that index
 *   CAS    = applied (0/1), has-current (0/1), [current], current's modification index:int64
 *   VALUE  = found (0/1), [value], modification index:int64 (0 when not found)   (kind 3, older)
 *   VALUE_REVISIONS = found (0/1), [value], modification, create index, version:int64 (kind 9)
 *   TXN    = succeeded (0/1), values-omitted (0/1), count:int32, count x result
 *   result = kind (1 put, 2 delete, 3 delete range, 4 get), then: nothing (put); deleted:int64
 *            (deletes); key, found (0/1), [value], modification, create index, version (get)
 *   ENTRIES = count:int32, count x (key, value), more (0/1)
 *   MANY   = count:int32, count x (length:int32, reply)
 *   PRESSURE = condition, cause (ordinals), measured:float64, threshold:float64, delay-ms:int64
 *   RANGE_DELETED = deleted:int64, has-resume (0/1), [resume key]
 *   REJECTED = message      the entry was committed but refused, alike on every replica
 *   LEASE  = outcome (1 granted, 2 revoked, 3 alive, 4 not found), id, TTL ms, deleted:int64,
 *            more (0/1)
 *   LEASE_INFO = id, granted TTL ms (-1: no such lease), remaining ms (-1: unknown here):int64,
 *            count:int32, count x key, more (0/1)
 *   LEASE_LIST = count:int32, count x (id, TTL ms:int64), more (0/1)
 * </pre>
 */
public sealed interface Reply
    permits Reply.Written,
        Reply.CasResult,
        Reply.Value,
        Reply.Entries,
        Reply.Pressure,
        Reply.Many,
        Reply.RangeDeleted,
        Reply.Rejected,
        Reply.TxnResult,
        Reply.LeaseResult,
        Reply.LeaseInfo,
        Reply.LeaseList {
  long appliedIndex();

  record Written(long appliedIndex) implements Reply {}

  /**
   * Whether the compare-and-set applied, and the key's value after it (null: absent) with the index
   * of the entry that last modified it (0: absent).
   */
  record CasResult(long appliedIndex, boolean applied, byte[] current, long modIndex)
      implements Reply {}

  /**
   * A key's value (null: absent), the index of the entry that last modified it, of the one that
   * created it, and its version (puts since it was created); the three are 0 when it is absent.
   */
  record Value(long appliedIndex, byte[] value, long modIndex, long createIndex, long version)
      implements Reply {
    static Value absent(long appliedIndex) {
      return new Value(appliedIndex, null, 0, 0, 0);
    }
  }

  /**
   * A transaction's outcome: whether its compares held (so {@code then} applied, else {@code
   * otherwise}) and one result per operation of the branch taken. {@code valuesOmitted}: the stored
   * form of a request record, whose gets keep their keys only (a retry reads them again).
   */
  record TxnResult(
      long appliedIndex, boolean succeeded, List<OpResult> results, boolean valuesOmitted)
      implements Reply {}

  /**
   * The result of one transaction operation: keys deleted (delete, delete range), or what a get
   * found: {@code value} null when the key is absent, its indexes and version 0 then.
   */
  record OpResult(
      OpKind kind,
      long deleted,
      byte[] key,
      byte[] value,
      long modIndex,
      long createIndex,
      long version) {
    static OpResult put() {
      return new OpResult(OpKind.PUT, 0, null, null, 0, 0, 0);
    }

    static OpResult deleted(OpKind kind, long deleted) {
      return new OpResult(kind, deleted, null, null, 0, 0, 0);
    }

    static OpResult got(byte[] key, EntryView.KeyState s) {
      return s == null
          ? new OpResult(OpKind.GET, 0, key, null, 0, 0, 0)
          : new OpResult(OpKind.GET, 0, key, s.value(), s.modIndex(), s.createIndex(), s.version());
    }

    /** Bytes this result takes in a reply. */
    long encodedSize() {
      return switch (kind) {
        case PUT -> 1;
        case DELETE, DELETE_RANGE -> 9;
        case GET -> 1 + 4 + key.length + 1 + (value == null ? 0 : 4 + value.length) + 24;
      };
    }
  }

  /** What a transaction operation did. */
  enum OpKind {
    PUT,
    DELETE,
    DELETE_RANGE,
    GET
  }

  /** Scan results; {@code more} when the limit cut it short (continue after the last key). */
  record Entries(long appliedIndex, List<byte[][]> entries, boolean more) implements Reply {}

  /** The encoded replies of a group's commands, in order. */
  record Many(long appliedIndex, List<byte[]> replies) implements Reply {}

  /**
   * One entry of a delete range: {@code deleted} keys went; {@code resumeFrom} is where the rest of
   * the range starts (null: the range is empty now).
   */
  record RangeDeleted(long appliedIndex, long deleted, byte[] resumeFrom) implements Reply {}

  /**
   * A committed entry that was not applied: malformed, a request id reused for another command, or
   * a command that failed while being applied. Every replica decides alike, so none diverges.
   */
  record Rejected(long appliedIndex, String message) implements Reply {}

  /** What a lease command did, or that the lease it names does not live. */
  enum LeaseOutcome {
    GRANTED,
    REVOKED,
    ALIVE,
    NOT_FOUND
  }

  /**
   * The outcome of a lease command, or of a write that named a lease that does not live ({@code
   * NOT_FOUND}, nothing written): the lease's id and granted TTL, and for a revoke the keys it
   * deleted and whether more remain (sent again until none do).
   */
  record LeaseResult(
      long appliedIndex, LeaseOutcome outcome, long id, long ttlMillis, long deleted, boolean more)
      implements Reply {
    static LeaseResult notFound(long appliedIndex, long id) {
      return new LeaseResult(appliedIndex, LeaseOutcome.NOT_FOUND, id, 0, 0, false);
    }
  }

  /**
   * A lease's granted TTL (-1: no such lease), the time left before it expires as the leader counts
   * it (-1: this node does not lead, so it does not know), and up to a page of its keys.
   */
  record LeaseInfo(
      long appliedIndex,
      long id,
      long grantedTtlMillis,
      long remainingMillis,
      List<byte[]> keys,
      boolean moreKeys)
      implements Reply {}

  /** Live leases as (id, granted TTL ms) pairs, in id order; {@code more} when cut short. */
  record LeaseList(long appliedIndex, List<long[]> leases, boolean more) implements Reply {}

  /** A node's engine write pressure. */
  record Pressure(long appliedIndex, WritePressure pressure) implements Reply {}

  public static byte[] encode(Reply r) {
    int size = 9;
    if (r instanceof Pressure) {
      size += 2 + 8 + 8 + 8;
    }
    byte[] message =
        r instanceof Rejected j ? j.message().getBytes(StandardCharsets.UTF_8) : new byte[0];
    if (r instanceof Rejected) {
      size += 4 + message.length;
    } else if (r instanceof RangeDeleted d) {
      size += 8 + 1 + (d.resumeFrom() == null ? 0 : 4 + d.resumeFrom().length);
    }
    if (r instanceof CasResult c) {
      size += 2 + (c.current() == null ? 0 : 4 + c.current().length) + 8;
    } else if (r instanceof Value v) {
      size += 1 + (v.value() == null ? 0 : 4 + v.value().length) + 24;
    } else if (r instanceof TxnResult t) {
      size += 2 + 4;
      for (OpResult o : t.results()) {
        size += (int) o.encodedSize();
      }
    } else if (r instanceof Many m) {
      size += 4;
      for (byte[] b : m.replies()) {
        size += 4 + b.length;
      }
    } else if (r instanceof LeaseResult) {
      size += 1 + 24 + 1;
    } else if (r instanceof LeaseInfo i) {
      size += 24 + 4 + 1;
      for (byte[] k : i.keys()) {
        size += 4 + k.length;
      }
    } else if (r instanceof LeaseList l) {
      size += 4 + 16 * l.leases().size() + 1;
    } else if (r instanceof Entries e) {
      size += 5;
      for (byte[][] kv : e.entries()) {
        size += 8 + kv[0].length + kv[1].length;
      }
    }
    ByteBuffer out = ByteBuffer.allocate(size).putLong(r.appliedIndex());
    if (r instanceof Written) {
      out.put((byte) 1);
    } else if (r instanceof CasResult c) {
      out.put((byte) 2).put((byte) (c.applied() ? 1 : 0));
      optional(out, c.current());
      out.putLong(c.modIndex());
    } else if (r instanceof Value v) {
      out.put((byte) 9);
      optional(out, v.value());
      out.putLong(v.modIndex()).putLong(v.createIndex()).putLong(v.version());
    } else if (r instanceof TxnResult t) {
      out.put((byte) 10)
          .put((byte) (t.succeeded() ? 1 : 0))
          .put((byte) (t.valuesOmitted() ? 1 : 0))
          .putInt(t.results().size());
      for (OpResult o : t.results()) {
        out.put((byte) (o.kind().ordinal() + 1));
        switch (o.kind()) {
          case PUT -> {}
          case DELETE, DELETE_RANGE -> out.putLong(o.deleted());
          case GET -> {
            out.putInt(o.key().length).put(o.key());
            optional(out, o.value());
            out.putLong(o.modIndex()).putLong(o.createIndex()).putLong(o.version());
          }
        }
      }
    } else if (r instanceof Pressure p) {
      WritePressure w = p.pressure();
      out.put((byte) 5)
          .put((byte) w.condition().ordinal())
          .put((byte) w.cause().ordinal())
          .putDouble(w.measured())
          .putDouble(w.threshold())
          .putLong(w.suggestedDelay().toMillis());
    } else if (r instanceof RangeDeleted d) {
      out.put((byte) 7).putLong(d.deleted());
      optional(out, d.resumeFrom());
    } else if (r instanceof Rejected) {
      out.put((byte) 8).putInt(message.length).put(message);
    } else if (r instanceof Many m) {
      out.put((byte) 6).putInt(m.replies().size());
      for (byte[] b : m.replies()) {
        out.putInt(b.length).put(b);
      }
    } else if (r instanceof LeaseResult l) {
      out.put((byte) 11)
          .put((byte) (l.outcome().ordinal() + 1))
          .putLong(l.id())
          .putLong(l.ttlMillis())
          .putLong(l.deleted())
          .put((byte) (l.more() ? 1 : 0));
    } else if (r instanceof LeaseInfo i) {
      out.put((byte) 12)
          .putLong(i.id())
          .putLong(i.grantedTtlMillis())
          .putLong(i.remainingMillis())
          .putInt(i.keys().size());
      for (byte[] k : i.keys()) {
        out.putInt(k.length).put(k);
      }
      out.put((byte) (i.moreKeys() ? 1 : 0));
    } else if (r instanceof LeaseList l) {
      out.put((byte) 13).putInt(l.leases().size());
      for (long[] lease : l.leases()) {
        out.putLong(lease[0]).putLong(lease[1]);
      }
      out.put((byte) (l.more() ? 1 : 0));
    } else if (r instanceof Entries e) {
      out.put((byte) 4).putInt(e.entries().size());
      for (byte[][] kv : e.entries()) {
        out.putInt(kv[0].length).put(kv[0]).putInt(kv[1].length).put(kv[1]);
      }
      out.put((byte) (e.more() ? 1 : 0));
    }
    return out.array();
  }

  private static void optional(ByteBuffer out, byte[] b) {
    out.put((byte) (b == null ? 0 : 1));
    if (b != null) {
      out.putInt(b.length).put(b);
    }
  }

  public static Reply decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    long index = in.getLong();
    byte kind = in.get();
    return switch (kind) {
      case 1 -> new Written(index);
      case 2 -> {
        boolean applied = in.get() == 1;
        byte[] current = optional(in);
        yield new CasResult(index, applied, current, in.getLong());
      }
      case 3 -> {
        byte[] value = optional(in);
        long mod = in.getLong();
        yield new Value(index, value, mod, mod, value == null ? 0 : 1);
      }
      case 9 -> {
        byte[] value = optional(in);
        yield new Value(index, value, in.getLong(), in.getLong(), in.getLong());
      }
      case 10 -> {
        boolean succeeded = in.get() == 1;
        boolean omitted = in.get() == 1;
        int n = in.getInt();
        List<OpResult> results = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          OpKind op = OpKind.values()[in.get() - 1];
          results.add(
              switch (op) {
                case PUT -> OpResult.put();
                case DELETE, DELETE_RANGE -> OpResult.deleted(op, in.getLong());
                case GET -> {
                  byte[] key = bytes(in);
                  byte[] value = optional(in);
                  yield new OpResult(op, 0, key, value, in.getLong(), in.getLong(), in.getLong());
                }
              });
        }
        yield new TxnResult(index, succeeded, results, omitted);
      }
      case 4 -> {
        int n = in.getInt();
        List<byte[][]> entries = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          entries.add(new byte[][] {bytes(in), bytes(in)});
        }
        yield new Entries(index, entries, in.get() == 1);
      }
      case 5 ->
          new Pressure(
              index,
              new WritePressure(
                  WritePressure.Condition.values()[in.get()],
                  WritePressure.Cause.values()[in.get()],
                  in.getDouble(),
                  in.getDouble(),
                  java.time.Duration.ofMillis(in.getLong())));
      case 6 -> {
        int n = in.getInt();
        List<byte[]> replies = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          replies.add(bytes(in));
        }
        yield new Many(index, replies);
      }
      case 7 -> {
        long deleted = in.getLong();
        yield new RangeDeleted(index, deleted, optional(in));
      }
      case 8 -> new Rejected(index, new String(bytes(in), StandardCharsets.UTF_8));
      case 11 ->
          new LeaseResult(
              index,
              LeaseOutcome.values()[in.get() - 1],
              in.getLong(),
              in.getLong(),
              in.getLong(),
              in.get() == 1);
      case 12 -> {
        long id = in.getLong();
        long granted = in.getLong();
        long remaining = in.getLong();
        int n = in.getInt();
        List<byte[]> keys = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          keys.add(bytes(in));
        }
        yield new LeaseInfo(index, id, granted, remaining, keys, in.get() == 1);
      }
      case 13 -> {
        int n = in.getInt();
        List<long[]> leases = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          leases.add(new long[] {in.getLong(), in.getLong()});
        }
        yield new LeaseList(index, leases, in.get() == 1);
      }
      default -> throw new IllegalArgumentException("unknown reply kind " + kind);
    };
  }

  private static byte[] optional(ByteBuffer in) {
    return in.get() == 1 ? bytes(in) : null;
  }

  private static byte[] bytes(ByteBuffer in) {
    byte[] b = new byte[in.getInt()];
    in.get(b);
    return b;
  }
}
