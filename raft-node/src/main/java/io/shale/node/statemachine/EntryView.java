package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.VersionedValue;
import io.shale.engine.WriteBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The user keys as the commands of one entry see them while it is applied: the engine as of the
 * entry's index - 1, plus what the entry's earlier commands and operations wrote into its batch.
 * Every write of a user key goes through here, so that its {@link KeyRevisions} record is written
 * with it and a later read in the same entry (a group's second put of a key, a transaction's get
 * after its put) sees it.
 *
 * <p>Attaching a key to a lease, or detaching it, is recorded here too ({@link LeaseRecords}).
 *
 * <p>Not thread-safe: one per entry, on the apply thread.
 */
final class EntryView {
  /** A live key: its value and revisions. */
  record KeyState(byte[] key, byte[] value, long modIndex, long createIndex, long version) {}

  /** A key this entry wrote: its revision after the write, or null if it deleted it. */
  private record Written(byte[] value, KeyRevisions.Revision revision) {}

  private static final byte[] FIRST_USER_KEY = {1};
  private static final byte[] NOTHING = {};

  private final Engine state;
  private final WriteBatch batch;
  private final long index;
  private final TreeMap<byte[], Written> written = new TreeMap<>(Arrays::compareUnsigned);
  private final List<KeyChange> changes = new ArrayList<>();
  private final List<LeaseEvent> leaseEvents = new ArrayList<>();

  private final boolean previousValues;

  EntryView(Engine state, WriteBatch batch, long index) {
    this(state, batch, index, false);
  }

  /** {@code previousValues}: record each change with the key as it was before it. */
  EntryView(Engine state, WriteBatch batch, long index, boolean previousValues) {
    this.state = state;
    this.batch = batch;
    this.index = index;
    this.previousValues = previousValues;
  }

  /** {@code key} as it is before a change, when asked to record it; else null. */
  private KeyChange.Previous previous(byte[] key) {
    if (!previousValues) {
      return null;
    }
    KeyState s = get(key);
    return s == null
        ? null
        : new KeyChange.Previous(s.value(), s.modIndex(), s.createIndex(), s.version());
  }

  /** {@code key} as of now, or null if absent. */
  KeyState get(byte[] key) {
    Written w = written.get(key);
    if (w != null || written.containsKey(key)) {
      return w.revision() == null
          ? null
          : new KeyState(key, w.value(), index, w.revision().createIndex(), w.revision().version());
    }
    VersionedValue v = state.getVersioned(key);
    if (v == null) {
      return null;
    }
    KeyRevisions.Revision r = KeyRevisions.read(state, key);
    return r == null
        ? new KeyState(key, v.value(), v.index(), v.index(), 1)
        : new KeyState(key, v.value(), v.index(), r.createIndex(), r.version());
  }

  /** Puts {@code value} (kept, not copied: the caller never changes it) under {@code key}. */
  void put(byte[] key, byte[] value) {
    put(key, value, 0);
  }

  /**
   * Puts {@code value} under {@code key}, attached to {@code lease} (0: none; the caller has
   * checked that it lives, {@link #leaseLives}), detaching it from any other lease it had.
   */
  void put(byte[] key, byte[] value, long lease) {
    KeyRevisions.Revision prior = revision(key);
    KeyChange.Previous was = previous(key);
    KeyRevisions.Revision r = KeyRevisions.Revision.afterPut(prior, index, lease);
    batch.putWithoutCopy(key, value);
    batch.putWithoutCopy(KeyRevisions.recordKey(key), r.encode());
    long before = prior == null ? 0 : prior.lease();
    if (before != lease) {
      if (before != 0) {
        batch.delete(LeaseRecords.attachedKey(before, key));
      }
      if (lease != 0) {
        batch.putWithoutCopy(LeaseRecords.attachedKey(lease, key), NOTHING);
      }
    }
    written.put(key, new Written(value, r));
    changes.add(new KeyChange(key, value, r.createIndex(), r.version(), was));
  }

  /** Deletes {@code key}; says whether it was there (a revision record, or written here). */
  boolean delete(byte[] key) {
    KeyRevisions.Revision prior = revision(key);
    KeyChange.Previous was = previous(key);
    batch.delete(key);
    batch.delete(KeyRevisions.recordKey(key));
    if (prior != null && prior.lease() != 0) {
      batch.delete(LeaseRecords.attachedKey(prior.lease(), key));
    }
    written.put(key, new Written(null, null));
    changes.add(new KeyChange(key, null, 0, 0, was));
    return prior != null;
  }

  /** The lease {@code key} is attached to as of now (0: none, or absent). */
  long leaseOf(byte[] key) {
    KeyRevisions.Revision r = revision(key);
    return r == null ? 0 : r.lease();
  }

  /**
   * Whether lease {@code id} lives (0, no lease, always does). Leases are granted and revoked by
   * entries of their own, so the engine's records are this entry's view of them.
   */
  boolean leaseLives(long id) {
    return id == 0 || LeaseRecords.ttlMillis(state, id) >= 0;
  }

  /** The changes made through this view, in order. */
  List<KeyChange> changes() {
    return changes;
  }

  /** What this entry did to leases, in order (what the leader's expiry clock follows). */
  List<LeaseEvent> leaseEvents() {
    return leaseEvents;
  }

  /** The revision of {@code key} without reading its value (null: none recorded, or deleted). */
  private KeyRevisions.Revision revision(byte[] key) {
    Written w = written.get(key);
    if (w != null) {
      return w.revision();
    }
    return KeyRevisions.read(state, key);
  }

  /**
   * The first user keys in [start, end) (end null: to the last), at most {@code limit}, in key
   * order: the engine's, less those this entry deleted, plus those it put. Node records (keys
   * beginning with byte 0) are never among them.
   */
  List<byte[]> keysInRange(byte[] start, byte[] end, int limit) {
    byte[] from = start.length == 0 || start[0] == 0 ? FIRST_USER_KEY : start;
    List<byte[]> out = new ArrayList<>();
    if (end != null && Arrays.compareUnsigned(from, end) >= 0) {
      return out;
    }
    Map<byte[], Written> mine =
        end == null ? written.tailMap(from, true) : written.subMap(from, true, end, false);
    TreeMap<byte[], Boolean> keys = new TreeMap<>(Arrays::compareUnsigned);
    // Enough engine keys that those this entry deleted cannot crowd the limit out.
    long wanted = (long) limit + mine.size();
    try (ScanIterator it = state.scan(new ScanOptions(from, end, wanted, false, true))) {
      while (it.next()) {
        keys.put(it.key(), Boolean.TRUE);
      }
    }
    for (Map.Entry<byte[], Written> e : mine.entrySet()) {
      keys.put(e.getKey(), e.getValue().revision() != null);
    }
    for (Map.Entry<byte[], Boolean> k : keys.entrySet()) {
      if (out.size() == limit) {
        break;
      }
      if (k.getValue()) {
        out.add(k.getKey());
      }
    }
    return out;
  }
}
