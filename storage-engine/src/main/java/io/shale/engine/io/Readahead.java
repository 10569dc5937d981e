package io.shale.engine.io;

import java.io.IOException;
import java.nio.ByteBuffer;

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
   * Reads at least {@code needed} and at most {@code into.remaining()} bytes from {@code offset}
   * into {@code into} from its position (fewer than remaining only at the end of the file) and
   * returns how many; throws, naming the file, if the file cannot give {@code needed}.
   */
  @FunctionalInterface
  public interface Source {
    int read(long offset, ByteBuffer into, int needed) throws IOException;
  }

  private final int initialBytes;
  private final int maxBytes;
  private final boolean alwaysSequential;
  private final DirectBuffers windows;
  private ByteBuffer buffer;
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

  private Readahead(
      int initialBytes, int maxBytes, boolean alwaysSequential, DirectBuffers windows) {
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
    this.windows = windows;
  }

  /**
   * Exact reads until reads turn sequential, then windows from {@code initialBytes} to {@code
   * maxBytes}, on the heap.
   */
  public static Readahead adaptive(int initialBytes, int maxBytes) {
    return new Readahead(initialBytes, maxBytes, false, null);
  }

  /**
   * As {@link #adaptive(int, int)}, with windows taken from {@code windows}; {@link #restart} and
   * {@link #release} give them back.
   */
  public static Readahead adaptive(int initialBytes, int maxBytes, DirectBuffers windows) {
    return new Readahead(initialBytes, maxBytes, false, windows);
  }

  /** Every read that misses the buffer fetches {@code bytes} (or the rest of the file). */
  public static Readahead fixed(int bytes) {
    return new Readahead(bytes, bytes, true, null);
  }

  /**
   * As {@link #fixed(int)}, with its window taken from {@code windows}; {@link #release} gives it
   * back.
   */
  public static Readahead fixed(int bytes, DirectBuffers windows) {
    return new Readahead(bytes, bytes, true, windows);
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
      buffer.get((int) (offset - bufferStart), into, at, length);
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
      source.read(offset, ByteBuffer.wrap(into, at, length), length);
    } else {
      bufferOwner = -1; // unusable until filled
      if (buffer == null || buffer.capacity() < window) {
        release();
        buffer = windows != null ? windows.take(window) : ByteBuffer.allocate(window);
      }
      buffer.clear().limit(window);
      int n = source.read(offset, buffer, length);
      bufferOwner = owner;
      bufferStart = offset;
      bufferLength = n;
      buffer.get(0, into, at, length);
    }
    remember(owner, offset + length);
  }

  /**
   * Start over as a new reader would (no buffered bytes, no sequential run). A window taken from
   * {@link DirectBuffers} goes back there; a heap window is kept if it is at most {@code
   * keepBytes}, so that a pooled instance does not allocate it again.
   */
  public void restart(int keepBytes) {
    lastOwner = -1;
    lastEnd = 0;
    window = 0;
    sequentialRun = 0;
    if (windows != null || (buffer != null && buffer.capacity() > keepBytes)) {
      release();
    }
    bufferOwner = -1;
  }

  /**
   * Drop the window; one taken from {@link DirectBuffers} goes back there. Reads may go on (a new
   * window is taken when one is needed).
   */
  public void release() {
    if (windows != null && buffer != null) {
      windows.give(buffer);
    }
    buffer = null;
    bufferOwner = -1;
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
