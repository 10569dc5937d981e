package io.shale.engine.iterator;

import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;

/**
 * The user's view of a merged stream: for each user key in {@code [start, end)}, the newest version
 * with sequence {@code <= readSequence}, skipped if it is a tombstone; at most {@code limit} keys.
 * Forward streams meet the newest version of a key first; reverse streams meet it last, so the
 * reverse path remembers the best version while it walks the key's versions.
 */
public final class VisibleEntryIterator implements AutoCloseable {
  private final InternalIterator source;
  private final Direction direction;
  private final byte[] start;
  private final byte[] end;
  private final long readSequence;
  private final boolean keysOnly;
  private long remaining;
  private boolean started;
  private byte[] key;
  private byte[] value;
  private ValueKind kind;

  /**
   * @param start inclusive lower bound, or null for none
   * @param end exclusive upper bound, or null for none
   * @param limit maximum keys returned; {@code <= 0} means no limit
   */
  public VisibleEntryIterator(
      InternalIterator source,
      Direction direction,
      byte[] start,
      byte[] end,
      long readSequence,
      long limit,
      boolean keysOnly) {
    this.source = source;
    this.direction = direction;
    this.start = start;
    this.end = end;
    this.readSequence = readSequence;
    this.keysOnly = keysOnly;
    this.remaining = limit <= 0 ? Long.MAX_VALUE : limit;
  }

  /** Advance to the next visible key; false when the range or the limit is exhausted. */
  public boolean next() {
    if (!started) {
      started = true;
      if (direction == Direction.FORWARD) {
        if (start == null) {
          source.seekToFirst();
        } else {
          source.seek(start);
        }
      } else {
        if (end == null) {
          source.seekToFirst();
        } else {
          source.seek(end);
        }
      }
    }
    key = null;
    value = null;
    if (remaining <= 0) {
      return false;
    }
    boolean found = direction == Direction.FORWARD ? nextForward() : nextReverse();
    if (found) {
      remaining--;
    }
    return found;
  }

  private boolean nextForward() {
    while (source.valid()) {
      byte[] k = source.userKey();
      if (end != null && Keys.compare(k, end) >= 0) {
        return false;
      }
      while (source.valid()
          && source.sequence() > readSequence
          && Keys.compare(source.userKey(), k) == 0) {
        source.next();
      }
      if (!source.valid() || Keys.compare(source.userKey(), k) != 0) {
        continue;
      }
      boolean live = source.kind() != ValueKind.TOMBSTONE;
      if (live) {
        key = k;
        kind = source.kind();
        value = keysOnly ? null : source.value();
      }
      source.next();
      while (source.valid() && Keys.compare(source.userKey(), k) == 0) {
        source.next();
      }
      if (live) {
        return true;
      }
    }
    return false;
  }

  private boolean nextReverse() {
    while (source.valid()) {
      byte[] k = source.userKey();
      if (start != null && Keys.compare(k, start) < 0) {
        return false;
      }
      ValueKind bestKind = null;
      byte[] bestValue = null;
      while (source.valid() && Keys.compare(source.userKey(), k) == 0) {
        if (source.sequence() <= readSequence) {
          bestKind = source.kind();
          bestValue = keysOnly || bestKind == ValueKind.TOMBSTONE ? null : source.value();
        }
        source.next();
      }
      if (bestKind != null && bestKind != ValueKind.TOMBSTONE) {
        key = k;
        kind = bestKind;
        value = bestValue;
        return true;
      }
    }
    return false;
  }

  public byte[] key() {
    if (key == null) {
      throw new IllegalStateException(
          "no current entry: call next() and check that it returned true");
    }
    return key;
  }

  /** The kind of the current entry: VALUE, or BLOB_POINTER when {@link #value} is a pointer. */
  public ValueKind kind() {
    return kind;
  }

  /** The stored value: the bytes themselves, or an encoded blob pointer (see {@link #kind}). */
  public byte[] value() {
    if (keysOnly) {
      throw new IllegalStateException("this scan is keys-only; it carries no values");
    }
    if (key == null) {
      throw new IllegalStateException(
          "no current entry: call next() and check that it returned true");
    }
    return value;
  }

  @Override
  public void close() {
    source.close();
  }
}
