package io.shale.engine.sstable;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Varints;

/**
 * Builds one block of prefix-compressed entries. Precondition: entries are added in the table's
 * order. Reused across blocks ({@link #reset}) to keep table writing allocation-free per entry.
 */
final class BlockBuilder {
  private final int restartInterval;
  private final ByteSink buf = new ByteSink(8192);
  private int[] restarts = new int[64];
  private int restartCount;
  private int sinceRestart;
  private byte[] lastKey = new byte[64];
  private int lastKeyLen;
  private int entries;

  BlockBuilder(int restartInterval) {
    this.restartInterval = restartInterval;
    reset();
  }

  void reset() {
    buf.reset();
    restartCount = 0;
    addRestart(0);
    sinceRestart = 0;
    lastKeyLen = 0;
    entries = 0;
  }

  private void addRestart(int offset) {
    if (restartCount == restarts.length) {
      restarts = java.util.Arrays.copyOf(restarts, restartCount * 2);
    }
    restarts[restartCount++] = offset;
  }

  /** Add an entry whose key is {@code userKey | trailer}. */
  void add(byte[] userKey, long trailer, byte[] value, int valueOffset, int valueLength) {
    int keyLen = userKey.length + 8;
    int shared = 0;
    if (sinceRestart >= restartInterval) {
      addRestart(buf.size());
      sinceRestart = 0;
    } else {
      int max = Math.min(lastKeyLen, userKey.length);
      while (shared < max && lastKey[shared] == userKey[shared]) {
        shared++;
      }
    }
    buf.putVarint(shared).putVarint(keyLen - shared).putVarint(valueLength);
    if (lastKey.length < keyLen) {
      lastKey = java.util.Arrays.copyOf(lastKey, Math.max(keyLen, lastKey.length * 2));
    }
    System.arraycopy(userKey, 0, lastKey, 0, userKey.length);
    Varints.writeFixed64(lastKey, userKey.length, trailer);
    lastKeyLen = keyLen;
    buf.put(lastKey, shared, keyLen - shared);
    buf.put(value, valueOffset, valueLength);
    sinceRestart++;
    entries++;
  }

  boolean isEmpty() {
    return entries == 0;
  }

  /** Bytes the finished block would have. */
  int estimatedSize() {
    return buf.size() + restartCount * 4 + 4;
  }

  /** Append the restart array; the returned sink holds the block until the next {@link #reset}. */
  ByteSink finish() {
    for (int i = 0; i < restartCount; i++) {
      buf.putFixed32(restarts[i]);
    }
    buf.putFixed32(restartCount);
    return buf;
  }
}
