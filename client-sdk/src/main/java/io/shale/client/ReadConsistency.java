package io.shale.client;

/** What a read may return. */
public enum ReadConsistency {
  /**
   * The latest acknowledged write, as if the read ran at one instant between its call and its
   * answer (the leader's ReadIndex). The default.
   */
  LINEARIZABLE,
  /**
   * Whatever the answering node has applied, possibly behind the leader; no round trip to the
   * leader, so cheaper and available without a majority.
   */
  STALE
}
