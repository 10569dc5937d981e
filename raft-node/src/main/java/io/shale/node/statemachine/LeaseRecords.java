package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Leases as node records in the engine, written in the same batch as the keys they govern, so they
 * are exactly as durable as those keys and travel in snapshots with them:
 *
 * <pre>
 *   \0l{id:int64}        -> granted TTL in milliseconds:int64      a live lease
 *   \0k{id:int64}{key}   -> (empty)                                 a key attached to lease id
 *   \0L                  -> live leases:int64                       their count (for the cap)
 * </pre>
 *
 * A lease's id is the index of the entry that granted it, so ids are never reused: attachments left
 * by a revoke that spans several entries (see {@link LeaseApplier}) can never be inherited by a
 * later lease. Only {@link EntryView} and {@link LeaseApplier} write these records.
 */
final class LeaseRecords {
  private static final byte[] LEASE = {0, 'l'};
  private static final byte[] ATTACHED = {0, 'k'};
  private static final byte[] COUNT = {0, 'L'};

  private LeaseRecords() {}

  static byte[] leaseKey(long id) {
    return ByteBuffer.allocate(LEASE.length + 8).put(LEASE).putLong(id).array();
  }

  static byte[] attachedKey(long id, byte[] key) {
    return ByteBuffer.allocate(ATTACHED.length + 8 + key.length)
        .put(ATTACHED)
        .putLong(id)
        .put(key)
        .array();
  }

  static byte[] countKey() {
    return COUNT.clone();
  }

  static byte[] encodeLong(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  /** The granted TTL of lease {@code id} in milliseconds, or -1 if no such lease lives. */
  static long ttlMillis(Engine state, long id) {
    byte[] v = state.get(leaseKey(id));
    return v == null ? -1 : decodeLong(v, "lease record");
  }

  /** Live leases, as counted by their count record. */
  static long count(Engine state) {
    byte[] v = state.get(COUNT);
    return v == null ? 0 : decodeLong(v, "lease count");
  }

  /** A live lease: its id and granted TTL. */
  record Lease(long id, long ttlMillis) {}

  /** Live leases with ids above {@code after}, in id order, at most {@code limit}. */
  static List<Lease> list(Engine state, long after, int limit) {
    List<Lease> out = new ArrayList<>();
    byte[] from = after < 0 ? LEASE : leaseKey(after + 1);
    if (after == Long.MAX_VALUE) {
      return out;
    }
    try (ScanIterator it =
        state.scan(new ScanOptions(from, prefixEnd(LEASE), limit, false, false))) {
      while (it.next()) {
        out.add(new Lease(idOf(it.key(), LEASE.length), decodeLong(it.value(), "lease record")));
      }
    }
    return out;
  }

  /** Up to {@code limit} keys attached to lease {@code id}, in key order. */
  static List<byte[]> attachedKeys(Engine state, long id, int limit) {
    byte[] prefix = attachedPrefix(id);
    // Ids are entry indexes (positive), so id + 1 is the next prefix in the engine's order.
    byte[] end = id == Long.MAX_VALUE ? prefixEnd(ATTACHED) : attachedPrefix(id + 1);
    List<byte[]> out = new ArrayList<>();
    try (ScanIterator it = state.scan(new ScanOptions(prefix, end, limit, false, true))) {
      while (it.next()) {
        out.add(Arrays.copyOfRange(it.key(), prefix.length, it.key().length));
      }
    }
    return out;
  }

  /**
   * Ids of leases that have no lease record but still have attached keys: revokes that stopped
   * part-way (their submitter died) and must be finished. At most {@code limit}.
   */
  static List<Long> unfinishedRevokes(Engine state, int limit) {
    List<Long> out = new ArrayList<>();
    byte[] from = ATTACHED;
    while (out.size() < limit) {
      long id;
      try (ScanIterator it =
          state.scan(new ScanOptions(from, prefixEnd(ATTACHED), 1, false, true))) {
        if (!it.next()) {
          break;
        }
        id = idOf(it.key(), ATTACHED.length);
      }
      if (state.get(leaseKey(id)) == null) {
        out.add(id);
      }
      if (id == Long.MAX_VALUE) {
        break;
      }
      from = attachedPrefix(id + 1);
    }
    return out;
  }

  private static byte[] attachedPrefix(long id) {
    return ByteBuffer.allocate(ATTACHED.length + 8).put(ATTACHED).putLong(id).array();
  }

  private static long idOf(byte[] recordKey, int offset) {
    return ByteBuffer.wrap(recordKey, offset, 8).getLong();
  }

  private static long decodeLong(byte[] v, String what) {
    if (v.length != 8) {
      throw new IllegalStateException(what + " holds " + v.length + " bytes, not 8");
    }
    return ByteBuffer.wrap(v).getLong();
  }

  /** The first key after every key beginning with {@code prefix} (a record prefix: 0, a letter). */
  private static byte[] prefixEnd(byte[] prefix) {
    byte[] end = prefix.clone();
    end[end.length - 1]++;
    return end;
  }
}
