package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.WriteBatch;
import java.util.List;

/**
 * Applies lease commands: grant, revoke and keep-alive. Deterministic like every applier: the
 * expiry decision is not made here but by the leader, which sends a revoke when a lease's TTL has
 * run out on its clock; here a revoke is a revoke, whoever sent it.
 */
final class LeaseApplier {
  /** The most keys one revoke entry deletes; a lease with more is revoked over several entries. */
  static final int MAX_REVOKE_KEYS = 10_000;

  /**
   * The most leases that may live at once: each costs a record and, on every replica, a slot in the
   * expiry clock's table, so a client granting leases in a loop must hit a wall.
   */
  static final long MAX_LEASES = 1_000_000;

  private LeaseApplier() {}

  static Reply grant(
      Engine state, WriteBatch batch, EntryView view, Command.LeaseGrant g, long index) {
    long live = LeaseRecords.count(state);
    if (live >= MAX_LEASES) {
      return new Reply.Rejected(
          index,
          "at most " + MAX_LEASES + " leases may live at once; revoke some before granting more");
    }
    batch.put(LeaseRecords.leaseKey(index), LeaseRecords.encodeLong(g.ttlMillis()));
    batch.put(LeaseRecords.countKey(), LeaseRecords.encodeLong(live + 1));
    view.leaseEvents().add(new LeaseEvent(LeaseEvent.Kind.GRANTED, index, g.ttlMillis()));
    return new Reply.LeaseResult(index, Reply.LeaseOutcome.GRANTED, index, g.ttlMillis(), 0, false);
  }

  /**
   * Removes the lease and deletes up to {@link #MAX_REVOKE_KEYS} of its keys. A lease already
   * removed whose keys a stopped revoke left behind is finished off the same way.
   */
  static Reply revoke(Engine state, WriteBatch batch, EntryView view, long id, long index) {
    long ttl = LeaseRecords.ttlMillis(state, id);
    List<byte[]> keys = LeaseRecords.attachedKeys(state, id, MAX_REVOKE_KEYS + 1);
    if (ttl < 0 && keys.isEmpty()) {
      return Reply.LeaseResult.notFound(index, id);
    }
    if (ttl >= 0) {
      batch.delete(LeaseRecords.leaseKey(id));
      batch.put(LeaseRecords.countKey(), LeaseRecords.encodeLong(LeaseRecords.count(state) - 1));
    }
    boolean more = keys.size() > MAX_REVOKE_KEYS;
    if (more) {
      keys = keys.subList(0, MAX_REVOKE_KEYS);
    }
    long deleted = 0;
    for (byte[] key : keys) {
      // The attachment goes whatever the key says; the key only if it is still this lease's.
      batch.delete(LeaseRecords.attachedKey(id, key));
      if (view.leaseOf(key) == id) {
        view.delete(key);
        deleted++;
      }
    }
    view.leaseEvents()
        .add(
            new LeaseEvent(
                more ? LeaseEvent.Kind.REVOKE_UNFINISHED : LeaseEvent.Kind.REVOKED, id, ttl));
    return new Reply.LeaseResult(
        index, Reply.LeaseOutcome.REVOKED, id, Math.max(ttl, 0), deleted, more);
  }

  /** Says the lease lives and tells the expiry clock to start its TTL again; writes nothing. */
  static Reply keepAlive(Engine state, EntryView view, long id, long index) {
    long ttl = LeaseRecords.ttlMillis(state, id);
    if (ttl < 0) {
      return Reply.LeaseResult.notFound(index, id);
    }
    view.leaseEvents().add(new LeaseEvent(LeaseEvent.Kind.KEPT_ALIVE, id, ttl));
    return new Reply.LeaseResult(index, Reply.LeaseOutcome.ALIVE, id, ttl, 0, false);
  }
}
