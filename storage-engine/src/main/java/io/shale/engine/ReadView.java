package io.shale.engine;

/**
 * Reads at one point of the write history. The engine itself reads its latest state; a {@link
 * Snapshot} reads the state at the moment it was taken, however long it stays open. Implementations
 * are thread-safe.
 */
public interface ReadView {
  /** The value of {@code key}, or null if it has none. */
  byte[] get(byte[] key);

  /** An iterator over a range; the caller must close it (it pins the files it reads). */
  ScanIterator scan(ScanOptions options);

  /** The index of the last batch this view reflects (-1 if none). */
  long appliedIndex();
}
