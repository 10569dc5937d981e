package io.shale.engine.blob;

import io.shale.engine.io.Readahead;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * The open blob files of an engine, opened on first use and closed when the file is deleted. A blob
 * file is deleted only when no live version references it, and every reader holds a version, so a
 * reader never meets a closed file. Thread-safe.
 */
public final class BlobFiles implements AutoCloseable {
  private final LongFunction<Path> pathOf;
  private final ConcurrentHashMap<Long, BlobFileReader> open = new ConcurrentHashMap<>();

  public BlobFiles(LongFunction<Path> pathOf) {
    this.pathOf = pathOf;
  }

  public BlobFileReader reader(long number) {
    return open.computeIfAbsent(
        number,
        n -> {
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

  /** A resolver for one scan, reading ahead up to {@code readaheadBytes} at a time. */
  public Resolver scanResolver(int readaheadBytes) {
    return new Resolver(readaheadBytes);
  }

  /**
   * Resolves pointers for one scan. Flushes write a memtable's large values in key order, so a scan
   * over values written together walks a blob file forward: after an exact first read, the
   * read-ahead window grows (from 64 KiB, doubling) while the pointers stay sequential, and one
   * read then serves many values. Pointers that jump between files or backwards (values written at
   * different times) are read exactly, so a short scan costs no more than its values. Not
   * thread-safe (one scan, one thread).
   */
  public final class Resolver {
    private static final int INITIAL_WINDOW = 64 << 10;
    private final Readahead readahead;
    private long reads;

    Resolver(int readaheadBytes) {
      this.readahead =
          readaheadBytes <= 0
              ? null
              : Readahead.adaptive(Math.min(INITIAL_WINDOW, readaheadBytes), readaheadBytes);
    }

    public byte[] resolve(BlobPointer p) {
      if (readahead == null) {
        reads++;
        return BlobFiles.this.read(p);
      }
      BlobFileReader r = reader(p.fileNumber());
      r.checkBounds(p);
      byte[] v = new byte[p.length()];
      try {
        readahead.read(p.fileNumber(), p.offset(), v, 0, v.length, r::readSome);
      } catch (IOException e) {
        throw new UncheckedIOException("reading blob file " + p.fileNumber(), e);
      }
      r.verify(p, v, 0);
      return v;
    }

    /** Reads issued to blob files so far (for tests of read-ahead). */
    public long reads() {
      return readahead == null ? reads : readahead.reads();
    }
  }

  @Override
  public void close() {
    for (Long n : open.keySet()) {
      evict(n);
    }
  }
}
