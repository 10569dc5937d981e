package io.shale.engine.io;

import java.io.IOException;

/**
 * A read-ahead buffer for one reader that may walk files forward (a scan's table iterator, a scan's
 * blob pointers, a compaction's inputs). A read the buffer does not hold is <em>random</em> unless
 * it starts at or shortly after where the previous read of the same file ended; a random read
 * fetches exactly its own bytes. From the third sequential read in a row (as RocksDB's automatic
 * read-ahead), a read fetches a window that starts at {@code initialBytes} and doubles up to {@code
 * maxBytes}, so a short scan of one or two blocks allocates no buffer (many of those exhaust the
 * heap). A {@link #fixed} window treats every read as sequential (compaction reads whole files).
 *
 * <p>Why adaptive: on data larger than memory, reading ahead for a random read costs a disk read of
 * the whole window and evicts pages others need; a sequential walk pays only a few small reads
 * before its window is large. Figures: docs/benchmarks.md, "Cause, change, effect". Not
 * thread-safe: one per reader.
 */
public final class Readahead {
  /**
   * Reads at least {@code needed} and at most {@code wanted} bytes from {@code offset} into {@code
   * into[at, ...)} (fewer than wanted only at the end of the file) and returns how many; throws,
   * naming the file, if the file cannot give {@code needed}.
   */
  @FunctionalInterface
  public interface Source {
    int read(long offset, byte[] into, int at, int needed, int wanted) throws IOException;
  }

  private final int initialBytes;
  private final int maxBytes;
  private final boolean alwaysSequential;
  private byte[] buffer;
  private long bufferOwner = -1;
  private long bufferStart;
  private int bufferLength;
  private long lastOwner = -1;
  private long lastEnd;
  private int window;
  private int sequentialRun;
  private long reads;

  /** Sequential reads in a row before an adaptive window opens. */
  static final int SEQUENTIAL_READS_BEFORE_WINDOW = 2;

  private Readahead(int initialBytes, int maxBytes, boolean alwaysSequential) {
    if (initialBytes <= 0 || maxBytes < initialBytes) {
      throw new IllegalArgumentException(
          "read-ahead window must grow from a positive size, got "
              + initialBytes
              + " to "
              + maxBytes);
    }
    this.initialBytes = initialBytes;
    this.maxBytes = maxBytes;
    this.alwaysSequential = alwaysSequential;
  }

  /**
   * Exact reads until reads turn sequential, then windows from {@code initialBytes} to {@code
   * maxBytes}.
   */
  public static Readahead adaptive(int initialBytes, int maxBytes) {
    return new Readahead(initialBytes, maxBytes, false);
  }

  /** Every read that misses the buffer fetches {@code bytes} (or the rest of the file). */
  public static Readahead fixed(int bytes) {
    return new Readahead(bytes, bytes, true);
  }

  /**
   * Copy bytes {@code [offset, offset + length)} of file {@code owner} (any id that tells files
   * apart) into {@code into[at, ...)}, from the buffer or through {@code source}.
   */
  public void read(long owner, long offset, byte[] into, int at, int length, Source source)
      throws IOException {
    if (owner == bufferOwner
        && offset >= bufferStart
        && offset + length <= bufferStart + bufferLength) {
      System.arraycopy(buffer, (int) (offset - bufferStart), into, at, length);
      remember(owner, offset + length);
      return;
    }
    boolean sequential =
        alwaysSequential
            || (owner == lastOwner && offset >= lastEnd && offset - lastEnd <= maxBytes);
    sequentialRun = sequential ? sequentialRun + 1 : 0;
    if (!sequential || (!alwaysSequential && sequentialRun < SEQUENTIAL_READS_BEFORE_WINDOW)) {
      window = 0;
    } else {
      window = window == 0 ? initialBytes : Math.min(maxBytes, window * 2);
    }
    reads++;
    if (window <= length) {
      source.read(offset, into, at, length, length);
    } else {
      if (buffer == null || buffer.length < window) {
        buffer = new byte[window];
      }
      bufferOwner = -1; // unusable until filled
      int n = source.read(offset, buffer, 0, length, window);
      bufferOwner = owner;
      bufferStart = offset;
      bufferLength = n;
      System.arraycopy(buffer, 0, into, at, length);
    }
    remember(owner, offset + length);
  }

  /**
   * Start over as a new reader would (no buffered bytes, no sequential run) but keep the buffer if
   * it is at most {@code keepBytes}, so that a pooled instance does not allocate it again.
   */
  public void restart(int keepBytes) {
    bufferOwner = -1;
    lastOwner = -1;
    lastEnd = 0;
    window = 0;
    sequentialRun = 0;
    if (buffer != null && buffer.length > keepBytes) {
      buffer = null;
    }
  }

  private void remember(long owner, long end) {
    lastOwner = owner;
    lastEnd = end;
  }

  /** Reads issued to the source so far. */
  public long reads() {
    return reads;
  }
}
