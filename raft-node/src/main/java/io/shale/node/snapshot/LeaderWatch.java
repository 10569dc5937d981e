package io.shale.node.snapshot;

/**
 * The leaders a follower has seen elected, so that a snapshot fetched at one leader's request can
 * tell whether another leader took over while it was fetched.
 *
 * <p>Why it matters: Ratis 3.3 reloads the state machine after a fetch only when a leader sends the
 * follower its next install notification, and until then refuses every append ("snapshot
 * installation is in progress"). A new leader whose log still holds the follower's next entry sends
 * appends, never a notification, so the follower would stay behind for good
 * (InstallAcrossLeaderChangeTest; docs/postmortems/07). A fetch whose requester was replaced is
 * therefore given up: Ratis then clears its install in progress, and the follower takes the new
 * leader's entries, or its notification.
 */
public final class LeaderWatch {
  /** Taken when a fetch starts: who asked, and how many elections had been seen. */
  public record Mark(String requester, long elections) {}

  private long elections;
  private String leader;

  /** Ratis saw {@code id} become leader (it reports only non-null leaders). */
  public synchronized void elected(String id) {
    elections++;
    leader = id;
  }

  /** A mark for a fetch asked for by {@code requester}, the leader now. */
  public synchronized Mark mark(String requester) {
    return new Mark(requester, elections);
  }

  /**
   * Whether a leader other than the mark's requester has been elected since the mark, and leads now
   * (a requester re-elected meanwhile still notifies, so its fetch stays wanted).
   */
  public synchronized boolean replacedSince(Mark mark) {
    return elections != mark.elections() && !mark.requester().equals(leader);
  }

  /** The leader elected last, or null if none yet. */
  public synchronized String leader() {
    return leader;
  }
}
