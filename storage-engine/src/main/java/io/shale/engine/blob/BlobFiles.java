package io.shale.engine.blob;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * The open blob files of an engine, opened on first use and closed when the file is deleted.
 * A blob file is deleted only when no live version references it, and every reader holds a
 * version, so a reader never meets a closed file. Thread-safe.
 */
public final class BlobFiles implements AutoCloseable {
  private final LongFunction<Path> pathOf;
  private final ConcurrentHashMap<Long, BlobFileReader> open = new ConcurrentHashMap<>();

  public BlobFiles(LongFunction<Path> pathOf) {
    this.pathOf = pathOf;
  }

  public BlobFileReader reader(long number) {
    return open.computeIfAbsent(number, n -> {
      try {
        return BlobFileReader.open(pathOf.apply(n), n);
      } catch (IOException e) {
        throw new UncheckedIOException("opening blob file " + n, e);
      }
    });
  }

  /** The value a pointer designates, verified. */
  public byte[] read(BlobPointer p) {
    try {
      return reader(p.fileNumber()).read(p);
    } catch (IOException e) {
      throw new UncheckedIOException("reading blob file " + p.fileNumber(), e);
    }
  }

  public void evict(long number) {
    BlobFileReader r = open.remove(number);
    if (r != null) {
      try {
        r.close();
      } catch (IOException ignored) {
        // read-only channel of a deleted file
      }
    }
  }

  /** A resolver for one scan, reading ahead {@code readaheadBytes} at a time. */
  public Resolver scanResolver(int readaheadBytes) {
    return new Resolver(readaheadBytes);
  }

  /**
   * Resolves pointers for one scan. Flushes write a memtable's large values in key order, so a
   * scan's pointers usually walk a blob file forward: one read of {@code readahead} bytes then
   * serves many values. Not thread-safe (one scan, one thread).
   */
  public final class Resolver {
    private final int readahead;
    private byte[] buffer;
    private long bufferFile = -1;
    private long bufferStart;
    private int bufferLength;
    private long reads;

    Resolver(int readahead) {
      this.readahead = readahead;
    }

    public byte[] resolve(BlobPointer p) {
      BlobFileReader r = reader(p.fileNumber());
      if (readahead <= 0 || p.length() >= readahead) {
        reads++;
        return BlobFiles.this.read(p);
      }
      r.checkBounds(p);
      boolean hit = bufferFile == p.fileNumber() && p.offset() >= bufferStart
          && p.offset() + p.length() <= bufferStart + bufferLength;
      if (!hit) {
        if (buffer == null) {
          buffer = new byte[readahead];
        }
        try {
          bufferLength = r.readRaw(p.offset(), buffer, readahead);
        } catch (IOException e) {
          throw new UncheckedIOException("reading blob file " + p.fileNumber(), e);
        }
        bufferFile = p.fileNumber();
        bufferStart = p.offset();
        reads++;
      }
      int at = (int) (p.offset() - bufferStart);
      r.verify(p, buffer, at);
      return java.util.Arrays.copyOfRange(buffer, at, at + p.length());
    }

    /** Reads issued to blob files so far (for tests of read-ahead). */
    public long reads() {
      return reads;
    }
  }

  @Override
  public void close() {
    for (Long n : open.keySet()) {
      evict(n);
    }
  }
}
