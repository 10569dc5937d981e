package io.shale.node.statemachine;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A read, answered by the state machine from its applied state: linearizable when sent through
 * Ratis's read-only path (ReadIndex), stale when asked of one replica directly.
 *
 * <pre>
 *   query = magic 0x53, version 1, kind (1 get, 2 scan, 3 write pressure, 4 lease, 5 leases),
 *           body
 *   get   = key
 *   scan  = start, has-end (0/1), [end], limit:int32, flags (1 reverse, 2 keys only)
 *   lease = id:int64, max keys:int32
 *   leases = after id:int64, limit:int32
 * </pre>
 */
public sealed interface Query
    permits Query.Get, Query.Scan, Query.Pressure, Query.Lease, Query.Leases {
  byte GET = 1;
  byte SCAN = 2;
  byte PRESSURE = 3;
  byte LEASE = 4;
  byte LEASES = 5;

  /** Lease {@code id}: its TTLs and up to {@code maxKeys} of its keys. */
  record Lease(long id, int maxKeys) implements Query {}

  /** Live leases with ids above {@code after}, at most {@code limit}. */
  record Leases(long after, int limit) implements Query {}

  record Get(byte[] key) implements Query {}

  /** The answering node's engine write pressure (the leader asks every follower for it). */
  record Pressure() implements Query {}

  /** Keys in [start, end) (end null: to the last key), at most {@code limit} entries. */
  record Scan(byte[] start, byte[] end, int limit, boolean reverse, boolean keysOnly)
      implements Query {}

  /** The most keys or leases one lease query returns. */
  int MAX_LEASE_PAGE = 10_000;

  static byte[] encode(Query q) {
    if (q instanceof Pressure) {
      return new byte[] {CommandCodec.MAGIC, CommandCodec.VERSION, PRESSURE};
    }
    if (q instanceof Lease l) {
      return ByteBuffer.allocate(3 + 12)
          .put(CommandCodec.MAGIC)
          .put(CommandCodec.VERSION)
          .put(LEASE)
          .putLong(l.id())
          .putInt(l.maxKeys())
          .array();
    }
    if (q instanceof Leases l) {
      return ByteBuffer.allocate(3 + 12)
          .put(CommandCodec.MAGIC)
          .put(CommandCodec.VERSION)
          .put(LEASES)
          .putLong(l.after())
          .putInt(l.limit())
          .array();
    }
    if (q instanceof Get g) {
      return ByteBuffer.allocate(3 + 4 + g.key().length)
          .put(CommandCodec.MAGIC)
          .put(CommandCodec.VERSION)
          .put(GET)
          .putInt(g.key().length)
          .put(g.key())
          .array();
    }
    Scan s = (Scan) q;
    int size = 3 + 4 + s.start().length + 1 + (s.end() == null ? 0 : 4 + s.end().length) + 4 + 1;
    ByteBuffer out =
        ByteBuffer.allocate(size)
            .put(CommandCodec.MAGIC)
            .put(CommandCodec.VERSION)
            .put(SCAN)
            .putInt(s.start().length)
            .put(s.start())
            .put((byte) (s.end() == null ? 0 : 1));
    if (s.end() != null) {
      out.putInt(s.end().length).put(s.end());
    }
    return out.putInt(s.limit())
        .put((byte) ((s.reverse() ? 1 : 0) | (s.keysOnly() ? 2 : 0)))
        .array();
  }

  static Query decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      if (in.get() != CommandCodec.MAGIC || in.get() != CommandCodec.VERSION) {
        throw new IllegalArgumentException("not a Shale query of format version 1");
      }
      byte kind = in.get();
      if (kind == GET) {
        return new Get(bytes(in));
      }
      if (kind == PRESSURE) {
        return new Pressure();
      }
      if (kind == LEASE || kind == LEASES) {
        long id = in.getLong();
        int n = in.getInt();
        if (n < 0 || n > MAX_LEASE_PAGE) {
          throw new IllegalArgumentException(
              "a lease query returns 0 to " + MAX_LEASE_PAGE + " entries, not " + n);
        }
        return kind == LEASE ? new Lease(id, n) : new Leases(id, n);
      }
      if (kind == SCAN) {
        byte[] start = bytes(in);
        byte[] end = in.get() == 1 ? bytes(in) : null;
        int limit = in.getInt();
        byte flags = in.get();
        if (limit < 1) {
          throw new IllegalArgumentException("scan limit must be at least 1, got " + limit);
        }
        return new Scan(start, end, limit, (flags & 1) != 0, (flags & 2) != 0);
      }
      throw new IllegalArgumentException("unknown query kind " + kind);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("query truncated at byte " + in.position());
    }
  }

  private static byte[] bytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException(
          "length " + n + " exceeds the " + in.remaining() + " bytes left");
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }
}
