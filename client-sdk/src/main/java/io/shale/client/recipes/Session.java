package io.shale.client.recipes;

import io.shale.client.Lease;
import io.shale.client.LeaseKeeper;
import io.shale.client.LeaseNotFoundException;
import io.shale.client.ShaleClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A lease kept alive for as long as this session is open: what locks and elections hold their keys
 * with, so that a holder that dies (or is cut off for a whole TTL) lets go by itself. Closing it
 * revokes the lease, deleting every key held with it at once.
 */
public final class Session implements AutoCloseable {
  private final ShaleClient client;
  private final LeaseKeeper keeper;

  private Session(ShaleClient client, LeaseKeeper keeper) {
    this.client = client;
    this.keeper = keeper;
  }

  /** Grants a lease of {@code ttl} and keeps it alive until {@link #close}. */
  public static Session open(ShaleClient client, Duration ttl) {
    Lease lease = client.leases().grant(ttl);
    return new Session(client, client.leases().keepAlive(lease));
  }

  public ShaleClient client() {
    return client;
  }

  public long leaseId() {
    return keeper.lease().id();
  }

  /**
   * Whether the lease is known to live (renewed within its TTL). A lock holder checks it before
   * acting, and fences what it writes with the lock's token besides ({@link Lock#fencingToken}).
   */
  public boolean alive() {
    return keeper.alive();
  }

  /** Completes, with the reason, once the lease is gone or may be gone. */
  public CompletableFuture<String> lost() {
    return keeper.lost();
  }

  /** Stops keeping the lease alive without revoking it: its keys go when its TTL runs out. */
  public void abandon() {
    keeper.close();
  }

  /** Stops the keep-alives and revokes the lease, deleting the keys held with it. */
  @Override
  public void close() {
    keeper.close();
    try {
      client.leases().revoke(leaseId());
    } catch (LeaseNotFoundException alreadyGone) {
      // expired meanwhile: its keys are gone already
    }
  }
}
