package io.shale.engine.blob;

import io.shale.engine.concurrent.RefCount;
import io.shale.engine.io.DirectBuffers;
import io.shale.engine.io.FileReads;
import io.shale.engine.io.Readahead;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * The open blob files of an engine, opened on first use, at most {@code capacity} at a time (the
 * least recently used beyond that are closed, as {@code [lsm] max_open_files} bounds tables), and
 * closed when the file is deleted. Each open file is reference counted: a read holds its reader for
 * the read's duration, so eviction never closes a channel under a read; the cache's own reference
 * is dropped on eviction and the channel closes when the last read ends. A blob file is deleted
 * only when no live version references it, and every reader holds a version. Thread-safe.
 */
public final class BlobFiles implements AutoCloseable {
  /** Blob files kept open when the caller names no bound. */
  public static final int DEFAULT_CAPACITY = 1000;

  private final boolean adviseRandom;
  private final LongFunction<Path> pathOf;
  private final int capacity;
  private final FileReads fileReads;
  private final LinkedHashMap<Long, Handle> open = new LinkedHashMap<>(16, 0.75f, true);

  /** An open reader and its references: the cache's (while cached) and each read's. */
  private static final class Handle {
    final BlobFileReader reader;
    final RefCount refs = new RefCount();

    Handle(BlobFileReader reader) {
      this.reader = reader;
    }

    void release() {
      if (refs.release("blob file " + reader.number())) {
        try {
          reader.close();
        } catch (IOException ignored) {
          // a read-only channel: nothing to lose
        }
      }
    }
  }

  public BlobFiles(LongFunction<Path> pathOf) {
    this(pathOf, DEFAULT_CAPACITY);
  }

  public BlobFiles(LongFunction<Path> pathOf, int capacity) {
    this(pathOf, capacity, new FileReads(), false);
  }

  /**
   * At most {@code capacity} files open; every read is counted in {@code fileReads}.
   *
   * @param adviseRandom advise the kernel that each file opened is read at random ({@link
   *     io.shale.engine.io.ReadAdvice})
   */
  public BlobFiles(
      LongFunction<Path> pathOf, int capacity, FileReads fileReads, boolean adviseRandom) {
    this.pathOf = pathOf;
    this.capacity = Math.max(1, capacity);
    this.fileReads = fileReads;
    this.adviseRandom = adviseRandom;
  }

  /** A retained handle on file {@code number}; the caller must {@link Handle#release} it. */
  private Handle acquire(long number) {
    synchronized (this) {
      Handle h = open.get(number);
      if (h != null && h.refs.tryRetain()) {
        return h;
      }
    }
    Handle fresh;
    try {
      fresh = new Handle(BlobFileReader.open(pathOf.apply(number), number, adviseRandom));
      fileReads.add(
          FileReads.FileKind.BLOB,
          FileReads.Cause.OTHER,
          BlobFormat.HEADER_SIZE + BlobFormat.FOOTER_SIZE);
    } catch (IOException e) {
      throw new UncheckedIOException("opening blob file " + number, e);
    }
    synchronized (this) {
      Handle h = open.get(number);
      if (h != null && h.refs.tryRetain()) {
        fresh.release();
        return h;
      }
      open.put(number, fresh);
      fresh.refs.tryRetain();
      Iterator<Map.Entry<Long, Handle>> it = open.entrySet().iterator();
      while (open.size() > capacity && it.hasNext()) {
        Map.Entry<Long, Handle> e = it.next();
        if (e.getKey() != number) {
          it.remove();
          e.getValue().release();
        }
      }
      return fresh;
    }
  }

  /** Blob files open now (for tests of the bound). */
  public synchronized int openFiles() {
    return open.size();
  }

  /** The value a pointer designates, verified; read for {@code cause}. */
  public byte[] read(BlobPointer p, FileReads.Cause cause) {
    Handle h = acquire(p.fileNumber());
    try {
      byte[] v = h.reader.read(p);
      fileReads.add(FileReads.FileKind.BLOB, cause, v.length);
      return v;
    } catch (IOException e) {
      throw new UncheckedIOException("reading blob file " + p.fileNumber(), e);
    } finally {
      h.release();
    }
  }

  /** Forget a deleted file: its channel closes once the reads using it are done. */
  public void evict(long number) {
    Handle h;
    synchronized (this) {
      h = open.remove(number);
    }
    if (h != null) {
      h.release();
    }
  }

  /**
   * Blob read-ahead windows kept per reading thread: two scans' largest windows at the default 256
   * KiB (a scan grows 64, 128 and 256 KiB windows).
   */
  private static final DirectBuffers SCAN_WINDOWS = new DirectBuffers(1 << 20);

  /** A resolver for one scan, reading ahead up to {@code readaheadBytes} at a time. */
  public Resolver scanResolver(int readaheadBytes) {
    return new Resolver(readaheadBytes);
  }

  /**
   * Resolves pointers for one scan. Flushes write a memtable's large values in key order, so a scan
   * over values written together walks a blob file forward: after an exact first read, the
   * read-ahead window grows (from 64 KiB, doubling) while the pointers stay sequential, and one
   * read then serves many values. Pointers that jump between files or backwards (values written at
   * different times) are read exactly, so a short scan costs no more than its values. Windows are
   * direct buffers of the thread's {@link #SCAN_WINDOWS}, given back by {@link #close}. Not
   * thread-safe (one scan, one thread).
   */
  public final class Resolver implements AutoCloseable {
    private static final int INITIAL_WINDOW = 64 << 10;
    private final Readahead readahead;
    private long reads;

    Resolver(int readaheadBytes) {
      this.readahead =
          readaheadBytes <= 0
              ? null
              : Readahead.adaptive(
                  Math.min(INITIAL_WINDOW, readaheadBytes), readaheadBytes, SCAN_WINDOWS);
    }

    /** Give the read-ahead window back; resolving may go on (a new window is taken then). */
    @Override
    public void close() {
      if (readahead != null) {
        readahead.release();
      }
    }

    public byte[] resolve(BlobPointer p) {
      if (readahead == null) {
        reads++;
        return BlobFiles.this.read(p, FileReads.Cause.SCAN);
      }
      Handle h = acquire(p.fileNumber());
      try {
        BlobFileReader r = h.reader;
        r.checkBounds(p);
        byte[] v = new byte[p.length()];
        readahead.read(
            p.fileNumber(),
            p.offset(),
            v,
            0,
            v.length,
            (offset, into, needed) -> {
              int n = r.readSome(offset, into, needed);
              fileReads.add(FileReads.FileKind.BLOB, FileReads.Cause.SCAN, n);
              return n;
            });
        r.verify(p, v, 0);
        return v;
      } catch (IOException e) {
        throw new UncheckedIOException("reading blob file " + p.fileNumber(), e);
      } finally {
        h.release();
      }
    }

    /** Reads issued to blob files so far (for tests of read-ahead). */
    public long reads() {
      return readahead == null ? reads : readahead.reads();
    }
  }

  @Override
  public void close() {
    List<Handle> all;
    synchronized (this) {
      all = new ArrayList<>(open.values());
      open.clear();
    }
    all.forEach(Handle::release);
  }
}
