package io.shale.node.statemachine;

import com.google.protobuf.InvalidProtocolBufferException;
import io.shale.node.auth.proto.AuthChange;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte form of {@link Command}s in the Raft log (Ratis checksums each log entry; this adds a
 * magic byte and a format version so that a foreign or future entry is refused by name):
 *
 * <pre>
 *   entry  = magic 0x53 ('S'), version 1, kind (1 batch, 2 compare-and-set, 3 identified,
 *            4 delete range, 5 group, 6 bounded delete range, 7 auth change, 8 transaction,
 *            9 lease grant, 10 lease revoke, 11 lease keep-alive), body
 *   range  = start, has-end (0/1), [end]           (kind 4: at most 10,000 keys per entry)
 *   bounded range = max-keys:int32, range          (kind 6)
 *   identified = request-id, the body of a batch or compare-and-set entry (kind, body)
 *   group  = count:int32, count x (length:int32, a whole batch or identified-batch entry)
 *   batch  = count:int32, count x op
 *   op     = type (1 put, 2 delete, 3 put with a lease), key, [value if put], [lease:int64 if 3]
 *   lease grant = TTL in milliseconds:int64;  lease revoke, lease keep-alive = lease id:int64
 *   cas    = key, expectation (0 absent, 1 value, 2 modification index), [expected value |
 *            expected index:int64], op
 *   txn    = count:int32, count x compare, count:int32, count x txn-op (then),
 *            count:int32, count x txn-op (otherwise)
 *   compare = key, target (1 value, 2 version, 3 create index, 4 modification index),
 *            result (1 equal, 2 not equal, 3 less, 4 greater), [value if target 1 | number:int64]
 *   txn-op = type (1 put, 2 delete, 3 delete range, 4 get, 5 put with a lease), then: key,
 *            value (put); key, value, lease:int64 (5); key (delete, get); start, has-end (0/1),
 *            [end] (delete range)
 *   key, value, expected = length:int32, bytes
 * </pre>
 *
 * Keys are 1 to {@link #MAX_KEY_BYTES} bytes and may not begin with byte 0, which the node reserves
 * for its own records in the engine.
 *
 * <p>{@link #decode} checks everything {@link #encode} does, and the hard caps below, because an
 * entry may come from any Raft client: whatever reaches the log is either refused here, on every
 * replica alike, or applies within bounded memory and time. The caps are constants, not settings,
 * so that every replica decides alike whatever its configuration; the API's configurable limits
 * must lie within them.
 */
public final class CommandCodec {
  static final byte MAGIC = 0x53;
  static final byte VERSION = 1;
  static final byte BATCH = 1;
  static final byte CAS = 2;
  static final byte IDENTIFIED = 3;
  static final byte DELETE_RANGE = 4;
  static final byte GROUP = 5;
  private static final byte PUT = 1;
  private static final byte DELETE = 2;
  static final byte DELETE_RANGE_BOUNDED = 6;
  static final byte AUTH = 7;
  static final byte TXN = 8;
  static final byte LEASE_GRANT = 9;
  static final byte LEASE_REVOKE = 10;
  static final byte LEASE_KEEP_ALIVE = 11;
  private static final byte PUT_LEASED = 3;

  /** The longest TTL a lease may be granted (a year); the API's limit lies within it. */
  public static final long MAX_LEASE_TTL_MILLIS = 365L * 24 * 3600 * 1000;

  /** The largest encoded auth change: names, a hash and a permission's two bounds fit easily. */
  static final int MAX_AUTH_CHANGE_BYTES = 256 << 10;

  public static final int MAX_KEY_BYTES = 64 << 10;

  /** The most operations one batch may hold. */
  public static final int MAX_BATCH_OPS = 100_000;

  /** The most commands one group may hold. */
  public static final int MAX_GROUP_COMMANDS = 10_000;

  /** The most compares and operations one transaction may hold, in all. */
  public static final int MAX_TXN_PARTS = 1_000;

  /** The most keys one delete-range entry may delete. */
  public static final int MAX_DELETE_RANGE_KEYS = 100_000;

  private CommandCodec() {}

  public static byte[] encode(Command c) {
    if (c instanceof Command.Group g) {
      List<byte[]> parts = new ArrayList<>(g.commands().size());
      int size = 3 + 4;
      for (Command sub : g.commands()) {
        byte[] p = encode(sub);
        parts.add(p);
        size += 4 + p.length;
      }
      ByteBuffer out =
          ByteBuffer.allocate(size).put(MAGIC).put(VERSION).put(GROUP).putInt(parts.size());
      for (byte[] p : parts) {
        putBytes(out, p);
      }
      return out.array();
    }
    if (c instanceof Command.Auth a) {
      byte[] body = a.change().toByteArray();
      return ByteBuffer.allocate(3 + 4 + body.length)
          .put(MAGIC)
          .put(VERSION)
          .put(AUTH)
          .putInt(body.length)
          .put(body)
          .array();
    }
    if (c instanceof Command.Identified id) {
      byte[] inner = encode(id.command());
      // magic, version, kind 3, id, then the inner entry without its magic and version
      return ByteBuffer.allocate(3 + 4 + id.requestId().length + inner.length - 2)
          .put(MAGIC)
          .put(VERSION)
          .put(IDENTIFIED)
          .putInt(id.requestId().length)
          .put(id.requestId())
          .put(inner, 2, inner.length - 2)
          .array();
    }
    if (c instanceof Command.DeleteRange r) {
      if (r.end() != null && java.util.Arrays.compareUnsigned(r.start(), r.end()) >= 0) {
        throw new IllegalArgumentException("delete range end must be after its start");
      }
      ByteBuffer out =
          ByteBuffer.allocate(
                  3 + 4 + 4 + r.start().length + 1 + (r.end() == null ? 0 : 4 + r.end().length))
              .put(MAGIC)
              .put(VERSION)
              .put(DELETE_RANGE_BOUNDED)
              .putInt(r.maxKeys());
      putBytes(out, r.start());
      out.put((byte) (r.end() == null ? 0 : 1));
      if (r.end() != null) {
        putBytes(out, r.end());
      }
      return out.array();
    }
    if (c instanceof Command.Txn t) {
      return encodeTxn(t);
    }
    if (c instanceof Command.LeaseGrant g) {
      return ByteBuffer.allocate(3 + 8)
          .put(MAGIC)
          .put(VERSION)
          .put(LEASE_GRANT)
          .putLong(g.ttlMillis())
          .array();
    }
    if (c instanceof Command.LeaseRevoke r) {
      return ByteBuffer.allocate(3 + 8)
          .put(MAGIC)
          .put(VERSION)
          .put(LEASE_REVOKE)
          .putLong(r.id())
          .array();
    }
    if (c instanceof Command.LeaseKeepAlive k) {
      return ByteBuffer.allocate(3 + 8)
          .put(MAGIC)
          .put(VERSION)
          .put(LEASE_KEEP_ALIVE)
          .putLong(k.id())
          .array();
    }
    int size = 3;
    if (c instanceof Command.Batch b) {
      size += 4;
      for (Command.Op op : b.ops()) {
        size += opSize(op);
      }
    } else if (c instanceof Command.CompareAndSet cas) {
      size +=
          4
              + cas.key().length
              + 1
              + (cas.comparesIndex() ? 8 : cas.expected() == null ? 0 : 4 + cas.expected().length)
              + opSize(cas.then());
    }
    ByteBuffer out = ByteBuffer.allocate(size).put(MAGIC).put(VERSION);
    if (c instanceof Command.Batch b) {
      out.put(BATCH).putInt(b.ops().size());
      for (Command.Op op : b.ops()) {
        putOp(out, op);
      }
    } else if (c instanceof Command.CompareAndSet cas) {
      out.put(CAS);
      putBytes(out, checkKey(cas.key()));
      if (cas.comparesIndex()) {
        out.put((byte) 2).putLong(cas.expectedIndex());
      } else {
        out.put((byte) (cas.expected() == null ? 0 : 1));
        if (cas.expected() != null) {
          putBytes(out, cas.expected());
        }
      }
      putOp(out, cas.then());
    }
    return out.array();
  }

  private static byte[] encodeTxn(Command.Txn t) {
    long size = 3 + 12;
    for (Compare c : t.compares()) {
      size += 4 + c.key().length + 2 + (c.value() != null ? 4 + c.value().length : 8);
    }
    for (List<TxnOp> branch : List.of(t.then(), t.otherwise())) {
      for (TxnOp op : branch) {
        size += txnOpSize(op);
      }
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException("a transaction of " + size + " bytes is too large");
    }
    ByteBuffer out = ByteBuffer.allocate((int) size).put(MAGIC).put(VERSION).put(TXN);
    out.putInt(t.compares().size());
    for (Compare c : t.compares()) {
      putBytes(out, c.key());
      out.put((byte) (c.target().ordinal() + 1)).put((byte) (c.result().ordinal() + 1));
      if (c.value() != null) {
        putBytes(out, c.value());
      } else {
        out.putLong(c.number());
      }
    }
    for (List<TxnOp> branch : List.of(t.then(), t.otherwise())) {
      out.putInt(branch.size());
      for (TxnOp op : branch) {
        putTxnOp(out, op);
      }
    }
    return out.array();
  }

  private static long txnOpSize(TxnOp op) {
    if (op instanceof TxnOp.Put p) {
      return 1 + 8 + p.key().length + p.value().length + (p.lease() == 0 ? 0 : 8);
    }
    if (op instanceof TxnOp.DeleteRange r) {
      return 1 + 4 + r.start().length + 1 + (r.end() == null ? 0 : 4 + r.end().length);
    }
    return 1 + 4 + (op instanceof TxnOp.Delete d ? d.key() : ((TxnOp.Get) op).key()).length;
  }

  private static void putTxnOp(ByteBuffer out, TxnOp op) {
    if (op instanceof TxnOp.Put p) {
      out.put((byte) (p.lease() == 0 ? 1 : 5));
      putBytes(out, p.key());
      putBytes(out, p.value());
      if (p.lease() != 0) {
        out.putLong(p.lease());
      }
    } else if (op instanceof TxnOp.Delete d) {
      out.put((byte) 2);
      putBytes(out, d.key());
    } else if (op instanceof TxnOp.DeleteRange r) {
      out.put((byte) 3);
      putBytes(out, r.start());
      out.put((byte) (r.end() == null ? 0 : 1));
      if (r.end() != null) {
        putBytes(out, r.end());
      }
    } else {
      out.put((byte) 4);
      putBytes(out, ((TxnOp.Get) op).key());
    }
  }

  private static Command.Txn getTxn(ByteBuffer in) {
    int parts = 0;
    int n = countOf(in, parts, "compares");
    parts += n;
    List<Compare> compares = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      byte[] key = getBytes(in);
      byte target = in.get();
      byte result = in.get();
      if (target < 1 || target > 4 || result < 1 || result > 4) {
        throw new IllegalArgumentException(
            "unknown compare target " + target + " or result " + result);
      }
      Compare.Target t = Compare.Target.values()[target - 1];
      Compare.Result r = Compare.Result.values()[result - 1];
      compares.add(
          t == Compare.Target.VALUE
              ? Compare.value(key, r, getBytes(in))
              : Compare.number(key, t, r, in.getLong()));
    }
    List<List<TxnOp>> branches = new ArrayList<>(2);
    for (int b = 0; b < 2; b++) {
      int m = countOf(in, parts, "operations");
      parts += m;
      List<TxnOp> ops = new ArrayList<>(m);
      for (int i = 0; i < m; i++) {
        byte type = in.get();
        ops.add(
            switch (type) {
              case 1 -> new TxnOp.Put(getBytes(in), getBytes(in));
              case 2 -> new TxnOp.Delete(getBytes(in));
              case 3 -> {
                byte[] start = getBytes(in);
                byte hasEnd = in.get();
                if (hasEnd != 0 && hasEnd != 1) {
                  throw new IllegalArgumentException("delete range end flag " + hasEnd);
                }
                yield new TxnOp.DeleteRange(start, hasEnd == 1 ? getBytes(in) : null);
              }
              case 4 -> new TxnOp.Get(getBytes(in));
              case 5 -> new TxnOp.Put(getBytes(in), getBytes(in), leaseId(in.getLong()));
              default ->
                  throw new IllegalArgumentException("unknown transaction operation " + type);
            });
      }
      branches.add(ops);
    }
    return new Command.Txn(compares, branches.get(0), branches.get(1));
  }

  /** A count of a transaction's parts, within what the entry's bytes and the cap allow. */
  private static int countOf(ByteBuffer in, int partsSoFar, String what) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining() || partsSoFar + n > MAX_TXN_PARTS) {
      throw new IllegalArgumentException(
          "a transaction of "
              + n
              + " "
              + what
              + " (after "
              + partsSoFar
              + " parts) is malformed or exceeds "
              + MAX_TXN_PARTS
              + " parts");
    }
    return n;
  }

  private static int opSize(Command.Op op) {
    return 1
        + 4
        + op.key().length
        + (op.isDelete() ? 0 : 4 + op.value().length)
        + (op.lease() == 0 ? 0 : 8);
  }

  private static void putOp(ByteBuffer out, Command.Op op) {
    out.put(op.isDelete() ? DELETE : op.lease() == 0 ? PUT : PUT_LEASED);
    putBytes(out, checkKey(op.key()));
    if (!op.isDelete()) {
      putBytes(out, op.value());
    }
    if (op.lease() != 0) {
      out.putLong(op.lease());
    }
  }

  /** A lease id read from an entry: positive (the index of the entry that granted it). */
  private static long leaseId(long id) {
    if (id <= 0) {
      throw new IllegalArgumentException("lease id " + id + " is not positive");
    }
    return id;
  }

  private static void putBytes(ByteBuffer out, byte[] b) {
    out.putInt(b.length).put(b);
  }

  /** The key if it is valid, else an {@link IllegalArgumentException} saying why. */
  public static byte[] checkKey(byte[] key) {
    if (key == null || key.length == 0) {
      throw new IllegalArgumentException("key is empty");
    }
    if (key.length > MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "key of " + key.length + " bytes exceeds the limit of " + MAX_KEY_BYTES);
    }
    if (key[0] == 0) {
      throw new IllegalArgumentException("keys beginning with byte 0 are reserved");
    }
    return key;
  }

  /** Decodes an entry; a malformed one is an {@link IllegalArgumentException} naming the fault. */
  public static Command decode(byte[] entry) {
    return decode(ByteBuffer.wrap(entry));
  }

  /**
   * Decodes the entry between {@code entry}'s position and limit (read-only buffers are fine: a log
   * entry's bytes are read in place). Decoding is strict, so that an accepted entry is the one
   * {@link #encode} would write for its command: a request-identified command's hash is then taken
   * from these bytes, equal to {@link RequestRecords#hash} of the command, without encoding it
   * again.
   */
  public static Command decode(ByteBuffer entry) {
    ByteBuffer in = entry.slice();
    int length = in.remaining();
    try {
      byte magic = in.get();
      byte version = in.get();
      if (magic != MAGIC) {
        throw new IllegalArgumentException("not a Shale command: magic byte " + magic);
      }
      if (version != VERSION) {
        throw new IllegalArgumentException(
            "command format version "
                + version
                + " is not supported (this node reads version "
                + VERSION
                + ")");
      }
      byte kind = in.get();
      if (kind == GROUP) {
        int n = in.getInt();
        if (n < 0 || n > in.remaining() / 4) {
          throw new IllegalArgumentException(
              "group of " + n + " commands in an entry of " + length + " bytes");
        }
        List<Command> commands = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          ByteBuffer sub = getSlice(in);
          // Checked before decoding so that nesting cannot recurse (a group holds batches only).
          if (sub.remaining() >= 3 && sub.get(2) == GROUP) {
            throw new IllegalArgumentException("a group may not hold a group");
          }
          commands.add(decode(sub));
        }
        if (in.hasRemaining()) {
          throw new IllegalArgumentException(in.remaining() + " bytes after the group");
        }
        return new Command.Group(commands);
      }
      byte[] requestId = null;
      int commandStart = 2;
      if (kind == IDENTIFIED) {
        requestId = getBytes(in);
        commandStart = in.position();
        kind = in.get();
      }
      Command c =
          switch (kind) {
            case BATCH -> {
              int n = in.getInt();
              if (n < 0 || n > in.remaining()) {
                throw new IllegalArgumentException(
                    "batch of " + n + " operations in " + length + " bytes");
              }
              List<Command.Op> ops = new ArrayList<>(n);
              for (int i = 0; i < n; i++) {
                ops.add(getOp(in));
              }
              yield new Command.Batch(ops);
            }
            case CAS -> {
              byte[] key = checkKey(getBytes(in));
              byte expectation = in.get();
              if (expectation == 2) {
                long index = in.getLong();
                if (index < 0) {
                  throw new IllegalArgumentException(
                      "compare-and-set on a negative modification index " + index);
                }
                yield new Command.CompareAndSet(key, null, index, getOp(in));
              }
              if (expectation != 0 && expectation != 1) {
                throw new IllegalArgumentException(
                    "unknown compare-and-set expectation " + expectation);
              }
              byte[] expected = expectation == 1 ? getBytes(in) : null;
              yield new Command.CompareAndSet(key, expected, getOp(in));
            }
            case TXN -> getTxn(in);
            case LEASE_GRANT -> new Command.LeaseGrant(in.getLong());
            case LEASE_REVOKE -> new Command.LeaseRevoke(leaseId(in.getLong()));
            case LEASE_KEEP_ALIVE -> new Command.LeaseKeepAlive(leaseId(in.getLong()));
            case DELETE_RANGE -> getRange(in, Command.DeleteRange.DEFAULT_MAX_KEYS);
            case DELETE_RANGE_BOUNDED -> getRange(in, in.getInt());
            case AUTH -> {
              if (requestId != null) {
                throw new IllegalArgumentException("an auth change carries no request id");
              }
              byte[] body = getBytes(in);
              if (body.length > MAX_AUTH_CHANGE_BYTES) {
                throw new IllegalArgumentException(
                    "auth change of " + body.length + " bytes exceeds " + MAX_AUTH_CHANGE_BYTES);
              }
              try {
                yield new Command.Auth(AuthChange.parseFrom(body));
              } catch (InvalidProtocolBufferException e) {
                throw new IllegalArgumentException("auth change does not parse: " + e.getMessage());
              }
            }
            default -> throw new IllegalArgumentException("unknown command kind " + kind);
          };
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " bytes after the command");
      }
      if (requestId == null) {
        return c;
      }
      // The legacy unbounded delete-range form encodes differently: hashed when applied.
      byte[] hash = kind == DELETE_RANGE ? null : hash(in, commandStart);
      return new Command.Identified(requestId, c, hash);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException(
          "command truncated at byte " + in.position() + " of " + length);
    }
  }

  /**
   * The SHA-256 of the command from {@code commandStart} to the end of {@code in}, as its own entry
   * (the magic and version, then its kind and body).
   */
  private static byte[] hash(ByteBuffer in, int commandStart) {
    MessageDigest sha = RequestRecords.sha256();
    sha.update(MAGIC);
    sha.update(VERSION);
    sha.update(in.duplicate().position(commandStart).limit(in.limit()));
    return sha.digest();
  }

  private static Command.DeleteRange getRange(ByteBuffer in, int maxKeys) {
    byte[] start = getBytes(in);
    if (start.length > MAX_KEY_BYTES) {
      throw new IllegalArgumentException("delete range start exceeds " + MAX_KEY_BYTES + " bytes");
    }
    byte hasEnd = in.get();
    if (hasEnd != 0 && hasEnd != 1) {
      throw new IllegalArgumentException("delete range end flag " + hasEnd + " is not 0 or 1");
    }
    byte[] end = hasEnd == 1 ? checkKey(getBytes(in)) : null;
    if (end != null && java.util.Arrays.compareUnsigned(start, end) >= 0) {
      throw new IllegalArgumentException("delete range end must be after its start");
    }
    return new Command.DeleteRange(start, end, maxKeys);
  }

  private static Command.Op getOp(ByteBuffer in) {
    byte type = in.get();
    byte[] key = checkKey(getBytes(in));
    return switch (type) {
      case PUT -> new Command.Op(key, getBytes(in));
      case PUT_LEASED -> new Command.Op(key, getBytes(in), leaseId(in.getLong()));
      case DELETE -> new Command.Op(key, null);
      default -> throw new IllegalArgumentException("unknown operation type " + type);
    };
  }

  /** A length-prefixed part of {@code in}, read in place. */
  private static ByteBuffer getSlice(ByteBuffer in) {
    int n = checkedLength(in);
    ByteBuffer part = in.slice(in.position(), n);
    in.position(in.position() + n);
    return part;
  }

  private static byte[] getBytes(ByteBuffer in) {
    byte[] b = new byte[checkedLength(in)];
    in.get(b);
    return b;
  }

  private static int checkedLength(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException(
          "length "
              + n
              + " at byte "
              + (in.position() - 4)
              + " exceeds the "
              + in.remaining()
              + " bytes left");
    }
    return n;
  }
}
