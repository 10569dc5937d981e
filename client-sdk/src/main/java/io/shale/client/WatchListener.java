package io.shale.client;

import java.util.List;

/**
 * Receives a watch's changes. Calls come one at a time, in index order, each index's changes
 * together and exactly once, across node failures included; keep them short (the next response
 * waits).
 */
public interface WatchListener {
  /**
   * Changes of whole indexes, in order; the watch has seen everything through {@code throughIndex}
   * (no event: a progress notice that nothing matched up to there).
   */
  void onEvents(List<WatchEvent> events, long throughIndex);

  /**
   * The watch ended for good: {@link CompactedException} (its resume index left every history it
   * tried), {@link InvalidRequestException}, or another {@link ShaleException} (denied, for
   * instance). Not called when the caller closes the watch.
   */
  default void onError(ShaleException e) {}
}
