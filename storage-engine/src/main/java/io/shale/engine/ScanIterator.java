package io.shale.engine;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.iterator.VisibleEntryIterator;
import io.shale.engine.key.ValueKind;

/**
 * The result of a scan: call {@link #next()} until it returns false, reading {@link #key()} and
 * {@link #value()} in between. Sees a consistent state (the one at its creation) while writes and
 * compactions go on, and pins the files of that state until {@link #close()}. Separated values are
 * read from their blob files only when {@link #value()} asks (a keys-only scan never touches a blob
 * file), with read-ahead. Not thread-safe; use one per thread.
 */
public final class ScanIterator implements AutoCloseable {
  private final VisibleEntryIterator entries;
  private final BlobFiles blobFiles;
  private final int readahead;
  private final Runnable onClose;
  private BlobFiles.Resolver resolver;
  private boolean closed;

  ScanIterator(VisibleEntryIterator entries, BlobFiles blobFiles, int readahead, Runnable onClose) {
    this.entries = entries;
    this.blobFiles = blobFiles;
    this.readahead = readahead;
    this.onClose = onClose;
  }

  /** Advance; false when the range or the limit is exhausted. */
  public boolean next() {
    if (closed) {
      throw new IllegalStateException("scan iterator is closed");
    }
    return entries.next();
  }

  public byte[] key() {
    return entries.key();
  }

  /** The current value; throws IllegalStateException for a keys-only scan. */
  public byte[] value() {
    byte[] v = entries.value();
    if (entries.kind() != ValueKind.BLOB_POINTER) {
      return v;
    }
    if (resolver == null) {
      resolver = blobFiles.scanResolver(readahead);
    }
    return resolver.resolve(BlobPointer.decode(v));
  }

  /** Reads this scan issued to blob files (read-ahead makes it far fewer than values read). */
  public long blobReads() {
    return resolver == null ? 0 : resolver.reads();
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        if (resolver != null) {
          resolver.close();
        }
        entries.close();
      } finally {
        onClose.run();
      }
    }
  }
}
