package io.shale.client;

/**
 * A watch could not go on from where it stood: the node's change history no longer holds that index
 * (it started too far back, or the watcher read so slowly that the history moved past it). Read the
 * current state and watch again from after it; {@link #oldestIndex} is the oldest index the node
 * held.
 */
public class CompactedException extends ShaleException {
  private static final long serialVersionUID = 1L;
  private final long oldestIndex;

  public CompactedException(String message, long oldestIndex, Throwable cause) {
    super(message, cause);
    this.oldestIndex = oldestIndex;
  }

  public long oldestIndex() {
    return oldestIndex;
  }
}
