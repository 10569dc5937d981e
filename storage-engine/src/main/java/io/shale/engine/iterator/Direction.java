package io.shale.engine.iterator;

/** The order an iterator walks in, fixed when it is created. */
public enum Direction {
  /** User key ascending, sequence descending (internal order). */
  FORWARD,
  /** User key descending, sequence ascending (exact reverse of internal order). */
  REVERSE
}
