package io.shale.engine.io;

import java.util.concurrent.atomic.LongAdder;

/**
 * Bytes an engine asked the operating system for when reading its table and blob files, by why it
 * read them: what a disk-read figure (iostat, cgroup blkio) is to be compared with. Counted where a
 * read is issued, so read-ahead windows count whole and blocks served by the block cache count
 * nothing; with a memory mapping, the bytes of every block decoded from the mapping count (the
 * kernel, not the engine, then decides what the disk reads). Thread-safe.
 */
public final class FileReads {
  /** Which files. */
  public enum FileKind {
    TABLE,
    BLOB
  }

  /** Why they were read. */
  public enum Cause {
    /** A get. */
    POINT_READ,
    /** A scan (an iterator's blocks, and the values it resolves). */
    SCAN,
    /** Compaction inputs, and values relocated out of blob files. */
    COMPACTION,
    /** Opening a file (footer, index, filter, properties) and verifying one. */
    OTHER
  }

  private final LongAdder[] bytes = new LongAdder[FileKind.values().length * Cause.values().length];

  public FileReads() {
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = new LongAdder();
    }
  }

  public void add(FileKind kind, Cause cause, long n) {
    bytes[slot(kind, cause)].add(n);
  }

  public long bytes(FileKind kind, Cause cause) {
    return bytes[slot(kind, cause)].sum();
  }

  /** The counts now, as one value. */
  public Totals totals() {
    return new Totals(
        bytes(FileKind.TABLE, Cause.POINT_READ),
        bytes(FileKind.TABLE, Cause.SCAN),
        bytes(FileKind.TABLE, Cause.COMPACTION),
        bytes(FileKind.TABLE, Cause.OTHER),
        bytes(FileKind.BLOB, Cause.POINT_READ),
        bytes(FileKind.BLOB, Cause.SCAN),
        bytes(FileKind.BLOB, Cause.COMPACTION),
        bytes(FileKind.BLOB, Cause.OTHER));
  }

  private static int slot(FileKind kind, Cause cause) {
    return kind.ordinal() * Cause.values().length + cause.ordinal();
  }

  /** Bytes read per file kind and cause, cumulative. */
  public record Totals(
      long tablePointReads,
      long tableScans,
      long tableCompactions,
      long tableOther,
      long blobPointReads,
      long blobScans,
      long blobCompactions,
      long blobOther) {
    public static final Totals ZERO = new Totals(0, 0, 0, 0, 0, 0, 0, 0);

    public long pointReads() {
      return tablePointReads + blobPointReads;
    }

    public long scans() {
      return tableScans + blobScans;
    }

    public long compactions() {
      return tableCompactions + blobCompactions;
    }

    public long other() {
      return tableOther + blobOther;
    }

    public long total() {
      return pointReads() + scans() + compactions() + other();
    }
  }
}
