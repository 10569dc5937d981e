package io.shale.node.snapshot;

import java.time.Duration;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * Where a fetched checkpoint is between the state machine and Ratis, from the end of its fetch to
 * the end of the reload that swaps it in.
 *
 * <p>Ratis 3.3 in notification mode hands an install over in three steps: the state machine's fetch
 * future completes ({@link #delivered}); a later install notification from a leader makes Ratis
 * pause the state machine ({@link #reloadStarting}) and reload it on its apply thread ({@link
 * #reloaded}). Two rules keep that hand-off whole (InstallHandoffTest,
 * InstallAcrossLeaderChangeTest; docs/postmortems/ 08 and 09):
 *
 * <ul>
 *   <li>No fetch starts while a reload runs ({@link #awaitNoReload}). A fetch started by the
 *       notification right after a reload began made the reload's swap wait for it and open the
 *       newer checkpoint, and the next notification paused the state machine while the engine was
 *       still opening; Ratis, having already taken the install, never reloaded it.
 *   <li>A delivered install that no leader consumes within a bound is consumed on the current
 *       leader's behalf ({@link #unconsumedFor}). Ratis refuses appends until a notification comes,
 *       and a leader elected after the fetch ended, whose log still holds the follower's next
 *       entry, never sends one ({@code io.shale.node.ratis.StrandedInstallWatch}).
 * </ul>
 */
public final class InstallHandoff {
  private enum Stage {
    IDLE,
    DELIVERED,
    RELOADING
  }

  /**
   * How long after a reload ends a fetch still waits: Ratis marks its applier running again a few
   * statements after the reload returns, and a reload it is asked for before that is lost (the
   * applier overwrites the request), which would leave the follower paused for good.
   */
  static final Duration DEFAULT_SETTLE = Duration.ofMillis(200);

  private final Duration settle;

  private Stage stage = Stage.IDLE;
  private TermIndex delivered;
  private String requester;
  private long deliveredAtNanos;
  private long reloadEndedAtNanos;

  public InstallHandoff() {
    this(DEFAULT_SETTLE);
  }

  /**
   * @param settle how long after a reload ends a fetch still waits ({@code
   *     raft.snapshot_install_settle})
   */
  public InstallHandoff(Duration settle) {
    this.settle = settle;
    this.reloadEndedAtNanos = System.nanoTime() - settle.toNanos();
  }

  /** The fetch asked for by {@code requester} returns {@code fetched} to Ratis. */
  public synchronized void delivered(TermIndex fetched, String requester) {
    this.stage = Stage.DELIVERED;
    this.delivered = fetched;
    this.requester = requester;
    this.deliveredAtNanos = System.nanoTime();
  }

  /** The install delivered and not yet consumed by a reload, or null. */
  public synchronized TermIndex deliveredNotReloaded() {
    return stage == Stage.DELIVERED ? delivered : null;
  }

  /** Who asked for the install {@link #deliveredNotReloaded} returns. */
  public synchronized String requester() {
    return requester;
  }

  /** The install delivered at least {@code bound} ago and still not consumed, or null. */
  public synchronized TermIndex unconsumedFor(Duration bound) {
    if (stage != Stage.DELIVERED || System.nanoTime() - deliveredAtNanos < bound.toNanos()) {
      return null;
    }
    return delivered;
  }

  /** Ratis paused the state machine: a reload follows (whatever was delivered is consumed). */
  public synchronized void reloadStarting() {
    stage = Stage.RELOADING;
  }

  /** The reload ended: the engine is open again. */
  public synchronized void reloaded() {
    if (stage == Stage.RELOADING) {
      stage = Stage.IDLE;
      delivered = null;
      requester = null;
    }
    reloadEndedAtNanos = System.nanoTime();
    notifyAll();
  }

  /**
   * Ratis answered that the delivered install is in place already (its log starts past it): no
   * reload is owed, and nothing waits for a notification any more.
   */
  public synchronized void alreadyInPlace() {
    if (stage == Stage.DELIVERED) {
      stage = Stage.IDLE;
      delivered = null;
      requester = null;
    }
  }

  /**
   * Waits until no reload runs, nor ended less than {@code settle} ago.
   *
   * @return false if one still ran after {@code bound}
   */
  public synchronized boolean awaitNoReload(Duration bound) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      long now = System.nanoTime();
      long settled = reloadEndedAtNanos + settle.toNanos();
      if (stage != Stage.RELOADING && now - settled >= 0) {
        return true;
      }
      if (deadline - now <= 0) {
        return false;
      }
      long until = stage == Stage.RELOADING ? deadline : Math.min(deadline, settled);
      wait(Math.max(1, (until - now) / 1_000_000));
    }
  }
}
