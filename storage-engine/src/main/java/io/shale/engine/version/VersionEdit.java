package io.shale.engine.version;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Varints;
import io.shale.engine.sstable.TableProperties;
import java.util.ArrayList;
import java.util.List;

/**
 * One atomic change to the set of files: files added and removed, and the counters that move with
 * them. Encoded as tagged fields; a manifest record holds exactly one edit.
 *
 * @param persistedAppliedIndex the highest applied index durable after this edit, or -1 if the edit
 *     does not change it
 * @param nextFileNumber the smallest file number never used, or -1 if unchanged
 */
public record VersionEdit(
    List<Added> added,
    List<Removed> removed,
    long persistedAppliedIndex,
    long nextFileNumber,
    List<BlobFileMeta> blobsAdded,
    List<BlobGarbage> blobGarbage,
    List<Long> blobsRemoved) {

  /** Dead bytes found in a blob file (pointers the current version dropped). */
  public record BlobGarbage(long number, long bytes, long count) {
    /** One entry per blob file, summing {@code a} and {@code b}, by file number. */
    public static List<BlobGarbage> merge(List<BlobGarbage> a, List<BlobGarbage> b) {
      List<BlobGarbage> both = new java.util.ArrayList<>(a);
      both.addAll(b);
      return sumByFile(both);
    }

    /** One entry per blob file of {@code garbage}, in file-number order, summing its entries. */
    public static List<BlobGarbage> sumByFile(List<BlobGarbage> garbage) {
      java.util.TreeMap<Long, long[]> sum = new java.util.TreeMap<>();
      for (BlobGarbage g : garbage) {
        long[] s = sum.computeIfAbsent(g.number(), n -> new long[2]);
        s[0] += g.bytes();
        s[1] += g.count();
      }
      List<BlobGarbage> out = new java.util.ArrayList<>();
      sum.forEach((n, s) -> out.add(new BlobGarbage(n, s[0], s[1])));
      return out;
    }
  }

  /** An edit of table files only. */
  public VersionEdit(
      List<Added> added, List<Removed> removed, long persistedAppliedIndex, long nextFileNumber) {
    this(added, removed, persistedAppliedIndex, nextFileNumber, List.of(), List.of(), List.of());
  }

  /** This edit with blob changes added. */
  public VersionEdit withBlobs(
      List<BlobFileMeta> newBlobs, List<BlobGarbage> garbage, List<Long> removedBlobs) {
    return new VersionEdit(
        added, removed, persistedAppliedIndex, nextFileNumber, newBlobs, garbage, removedBlobs);
  }

  /** This edit with another applied index. */
  public VersionEdit withAppliedIndex(long index, long nextFile) {
    return new VersionEdit(added, removed, index, nextFile, blobsAdded, blobGarbage, blobsRemoved);
  }

  /** A file added to a level. */
  public record Added(int level, FileMetadata file) {}

  /** A file removed from a level. */
  public record Removed(int level, long number) {}

  private static final int ADD = 1;
  private static final int REMOVE = 2;
  private static final int APPLIED = 3;
  private static final int NEXT_FILE = 4;
  private static final int BLOB_ADD = 5;
  private static final int BLOB_GARBAGE = 6;
  private static final int BLOB_REMOVE = 7;

  public VersionEdit {
    added = List.copyOf(added);
    removed = List.copyOf(removed);
    blobsAdded = List.copyOf(blobsAdded);
    blobGarbage = List.copyOf(blobGarbage);
    blobsRemoved = List.copyOf(blobsRemoved);
  }

  public static VersionEdit of(List<Added> added, List<Removed> removed) {
    return new VersionEdit(added, removed, -1, -1);
  }

  public byte[] encode() {
    ByteSink s = new ByteSink(64);
    for (Added a : added) {
      s.putVarint(ADD)
          .putVarint(a.level)
          .putVarint(a.file.number())
          .putVarint(a.file.size())
          .putBytes(a.file.properties().encode());
    }
    for (Removed r : removed) {
      s.putVarint(REMOVE).putVarint(r.level).putVarint(r.number);
    }
    if (persistedAppliedIndex >= 0) {
      s.putVarint(APPLIED).putVarint(persistedAppliedIndex);
    }
    if (nextFileNumber >= 0) {
      s.putVarint(NEXT_FILE).putVarint(nextFileNumber);
    }
    for (BlobFileMeta b : blobsAdded) {
      s.putVarint(BLOB_ADD)
          .putVarint(b.number())
          .putVarint(b.fileSize())
          .putVarint(b.totalBytes())
          .putVarint(b.totalCount())
          .putVarint(b.garbageBytes())
          .putVarint(b.garbageCount());
    }
    for (BlobGarbage g : blobGarbage) {
      s.putVarint(BLOB_GARBAGE).putVarint(g.number()).putVarint(g.bytes()).putVarint(g.count());
    }
    for (long n : blobsRemoved) {
      s.putVarint(BLOB_REMOVE).putVarint(n);
    }
    return s.toByteArray();
  }

  /** Decode; IllegalStateException on malformed input (the caller names file and offset). */
  public static VersionEdit decode(byte[] b) {
    List<Added> added = new ArrayList<>();
    List<Removed> removed = new ArrayList<>();
    long applied = -1;
    long next = -1;
    List<BlobFileMeta> blobs = new ArrayList<>();
    List<BlobGarbage> garbage = new ArrayList<>();
    List<Long> blobsGone = new ArrayList<>();
    Varints.Cursor c = new Varints.Cursor(b, 0, b.length);
    while (c.hasRemaining()) {
      int tag = Varints.readVarint32(c);
      switch (tag) {
        case ADD -> {
          int level = Varints.readVarint32(c);
          long number = Varints.readVarint64(c);
          long size = Varints.readVarint64(c);
          int len = Varints.readVarint32(c);
          if (c.pos + len > c.limit) {
            throw new IllegalStateException("file properties overrun the record");
          }
          byte[] props = java.util.Arrays.copyOfRange(b, c.pos, c.pos + len);
          c.pos += len;
          added.add(
              new Added(level, new FileMetadata(number, size, TableProperties.decode(props))));
        }
        case REMOVE -> removed.add(new Removed(Varints.readVarint32(c), Varints.readVarint64(c)));
        case APPLIED -> applied = Varints.readVarint64(c);
        case NEXT_FILE -> next = Varints.readVarint64(c);
        case BLOB_ADD ->
            blobs.add(
                new BlobFileMeta(
                    Varints.readVarint64(c),
                    Varints.readVarint64(c),
                    Varints.readVarint64(c),
                    Varints.readVarint64(c),
                    Varints.readVarint64(c),
                    Varints.readVarint64(c)));
        case BLOB_GARBAGE ->
            garbage.add(
                new BlobGarbage(
                    Varints.readVarint64(c), Varints.readVarint64(c), Varints.readVarint64(c)));
        case BLOB_REMOVE -> blobsGone.add(Varints.readVarint64(c));
        default -> throw new IllegalStateException("unknown version edit tag " + tag);
      }
    }
    return new VersionEdit(added, removed, applied, next, blobs, garbage, blobsGone);
  }
}
