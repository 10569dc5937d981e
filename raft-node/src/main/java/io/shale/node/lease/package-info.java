/**
 * When leases expire. The state machine applies grants, keep-alives and revokes alike on every
 * replica; the time a lease has left exists only on the leader, on its monotonic clock ({@link
 * io.shale.node.lease.LeaseExpiry}), which sends a revoke through the log when it runs out. A new
 * leader starts every lease's TTL afresh, so a failover never expires one early.
 */
package io.shale.node.lease;
