package io.shale.node.statemachine;

/**
 * What an applied entry did to a lease, for the clock that decides when leases expire ({@code
 * io.shale.node.lease.LeaseExpiry}): every replica sees the same events, and the leader restarts a
 * lease's TTL on its own clock when it is granted or kept alive.
 */
public record LeaseEvent(Kind kind, long id, long ttlMillis) {
  public enum Kind {
    /** Granted with {@code ttlMillis}. */
    GRANTED,
    /** Kept alive: its TTL starts again. */
    KEPT_ALIVE,
    /** Revoked, its keys all deleted. */
    REVOKED,
    /** Revoked, but some of its keys remain to be deleted by further revokes. */
    REVOKE_UNFINISHED
  }
}
