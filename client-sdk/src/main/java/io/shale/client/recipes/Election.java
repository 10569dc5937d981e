package io.shale.client.recipes;

import io.shale.client.Entry;
import io.shale.client.Watch;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Leader election on one key, held with a {@link Session}'s lease (etcd's concurrency.Election):
 * the leader is whoever holds the key; its value is the leader's proclamation (an address, say). A
 * leader that dies lets go when its lease expires and a waiting candidate takes over. Not
 * thread-safe: one candidate per instance.
 */
public final class Election {
  private final Session session;
  private final LeaseHeldKey held;
  private long token = -1;

  public Election(Session session, String name) {
    this.session = session;
    this.held = new LeaseHeldKey(session, name);
  }

  /**
   * Campaigns with {@code proposal} until elected or {@code timeout} passes; returns the term's
   * token (the key's create index: every later leader's is larger).
   */
  public long campaign(String proposal, Duration timeout)
      throws TimeoutException, InterruptedException {
    if (token > 0) {
      throw new IllegalStateException("already the leader");
    }
    token = held.take(proposal.getBytes(StandardCharsets.UTF_8), timeout);
    return token;
  }

  /** Whether this candidate leads and its session's lease is known to live. */
  public boolean isLeader() {
    return token > 0 && session.alive();
  }

  /** The token of this candidate's term, or -1 when it does not lead. */
  public long token() {
    return token;
  }

  /** Changes the leader's proclamation; false if this candidate no longer leads. */
  public boolean proclaim(String value) {
    return token > 0 && held.replace(token, value.getBytes(StandardCharsets.UTF_8));
  }

  /** Steps down; false if it had already lost the leadership. */
  public boolean resign() {
    if (token <= 0) {
      return false;
    }
    long t = token;
    token = -1;
    return held.release(t);
  }

  /** The current leader's key, value and token (create index), or null if nobody leads. */
  public Entry leader() {
    return session.client().get(held.key());
  }

  /** Watches the leadership from now on: a put is a new leader or proclamation, a delete none. */
  public Watch observe(WatchListener listener) {
    return session.client().watch(WatchOptions.key(held.key()), listener);
  }
}
