package io.shale.engine.sstable;

import java.util.Arrays;

/**
 * The block cache's map from a block (table file number, offset in the file) to where its bytes lie
 * in the cache's ring (position, length), in primitive arrays: open addressing with linear probing
 * and backward-shift deletion, so that no lookup, insertion or removal allocates. A map of objects
 * (a key, a value and a node per block) turned every cached block into three objects that lived as
 * long as the block, were copied by each young collection and then promoted (docs/benchmarks.md,
 * "Cause, change, effect under write bursts").
 *
 * <p>Invariant: at most half the slots are used (the table doubles beyond), so probes stay short.
 * Not thread-safe: the owning shard's monitor guards it.
 */
final class BlockIndex {
  private static final long EMPTY = -1;

  private long[] files;
  private long[] offsets;
  private long[] positions;
  private int[] lengths;
  private int mask;
  private int size;

  /**
   * @param capacity initial slots, rounded up to a power of two
   */
  BlockIndex(int capacity) {
    allocate(Integer.highestOneBit(Math.max(16, capacity - 1)) << 1);
  }

  private void allocate(int slots) {
    files = new long[slots];
    Arrays.fill(files, EMPTY);
    offsets = new long[slots];
    positions = new long[slots];
    lengths = new int[slots];
    mask = slots - 1;
    size = 0;
  }

  private int home(long file, long offset) {
    long h = file * 0x9E3779B97F4A7C15L + offset;
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    return (int) h & mask;
  }

  /** The slot of the block, or -1. */
  int find(long file, long offset) {
    for (int i = home(file, offset); files[i] != EMPTY; i = (i + 1) & mask) {
      if (files[i] == file && offsets[i] == offset) {
        return i;
      }
    }
    return -1;
  }

  long position(int slot) {
    return positions[slot];
  }

  int length(int slot) {
    return lengths[slot];
  }

  long file(int slot) {
    return files[slot];
  }

  int size() {
    return size;
  }

  int slots() {
    return mask + 1;
  }

  /** The lengths of every block mapped, summed (tests). */
  long indexedBytes() {
    long sum = 0;
    for (int i = 0; i <= mask; i++) {
      if (files[i] != EMPTY) {
        sum += lengths[i];
      }
    }
    return sum;
  }

  /** Map the block to {@code position, length}, replacing what it mapped to. */
  void put(long file, long offset, long position, int length) {
    if (file == EMPTY) {
      throw new IllegalArgumentException("file number " + file + " is reserved");
    }
    int i = home(file, offset);
    while (files[i] != EMPTY) {
      if (files[i] == file && offsets[i] == offset) {
        positions[i] = position;
        lengths[i] = length;
        return;
      }
      i = (i + 1) & mask;
    }
    files[i] = file;
    offsets[i] = offset;
    positions[i] = position;
    lengths[i] = length;
    size++;
    if (size > (mask + 1) / 2) {
      grow();
    }
  }

  private void grow() {
    long[] f = files;
    long[] o = offsets;
    long[] p = positions;
    int[] l = lengths;
    allocate(f.length * 2);
    for (int i = 0; i < f.length; i++) {
      if (f[i] != EMPTY) {
        put(f[i], o[i], p[i], l[i]);
      }
    }
  }

  /**
   * Remove the entry in {@code slot}, moving later entries of its probe run back so that every
   * entry stays reachable from its home slot.
   */
  void removeAt(int slot) {
    int hole = slot;
    for (int j = (hole + 1) & mask; files[j] != EMPTY; j = (j + 1) & mask) {
      int h = home(files[j], offsets[j]);
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      boolean homeAfterHole = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
      if (!homeAfterHole) {
        files[hole] = files[j];
        offsets[hole] = offsets[j];
        positions[hole] = positions[j];
        lengths[hole] = lengths[j];
        hole = j;
      }
    }
    files[hole] = EMPTY;
    size--;
  }

  /** Remove every block of {@code file}; returns the bytes they mapped. */
  long removeFile(long file) {
    long bytes = 0;
    // Removal moves entries back, possibly from the start of the table to its end: walk the
    // table twice around so that an entry moved behind the walk is seen again.
    for (int n = 0, i = 0; n < 2 * (mask + 1); n++, i = (i + 1) & mask) {
      if (files[i] == file) {
        bytes += lengths[i];
        removeAt(i);
        n--; // the slot may hold a moved entry now: look at it again
        i = (i - 1) & mask;
      }
    }
    return bytes;
  }
}
