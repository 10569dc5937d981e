package io.shale.client.recipes;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * A distributed lock on one key, held with a {@link Session}'s lease: at most one session holds it
 * at any index of the log, and a holder whose process dies, or who is cut off for a whole TTL,
 * loses it when its lease expires. Waiters watch the key and race for it when it is deleted (no
 * queue: not fair, but no waiter's death can hold up the others).
 *
 * <p>A lock alone cannot stop a holder that was paused past its TTL from acting as if it still held
 * it; write with {@link #fencingToken()} in a compare ({@code txn().ifCreateIndex(lock.key(),
 * EQUAL, token)}) and such a write fails instead of landing. Not thread-safe: one holder per
 * instance.
 */
public final class Lock {
  private final Session session;
  private final LeaseHeldKey held;
  private final String name;
  private long token = -1;

  /** The lock named {@code name} (its key), held with {@code session}'s lease. */
  public Lock(Session session, String name) {
    this.session = session;
    this.name = name;
    this.held = new LeaseHeldKey(session, name);
  }

  /** The key that holds the lock. */
  public String key() {
    return name;
  }

  /** Acquires the lock within {@code timeout}; returns its fencing token. */
  public long acquire(Duration timeout) throws TimeoutException, InterruptedException {
    if (token > 0) {
      throw new IllegalStateException("already held; release it first");
    }
    token = held.take(owner(), timeout);
    return token;
  }

  /** Acquires the lock if it is free now; returns its fencing token, or -1 if it is held. */
  public long tryAcquire() {
    if (token > 0) {
      throw new IllegalStateException("already held; release it first");
    }
    long t = held.tryTake(owner(), new io.shale.client.Entry[1]);
    token = t;
    return t;
  }

  /**
   * The token of the current hold: the lock key's create index, larger for every later holder; -1
   * when not held.
   */
  public long fencingToken() {
    return token;
  }

  /**
   * Whether this instance holds the lock and its session's lease is known to live. False once the
   * session is lost, even before the cluster expires the lease.
   */
  public boolean isHeld() {
    return token > 0 && session.alive();
  }

  /** Releases the lock; says whether it was still held (false: lost to lease expiry meanwhile). */
  public boolean release() {
    if (token <= 0) {
      return false;
    }
    long t = token;
    token = -1;
    return held.release(t);
  }

  private byte[] owner() {
    return ("lease " + session.leaseId()).getBytes(StandardCharsets.UTF_8);
  }
}
