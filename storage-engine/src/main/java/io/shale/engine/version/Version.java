package io.shale.engine.version;

import io.shale.engine.concurrent.RefCount;
import io.shale.engine.key.Keys;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An immutable set of table files by level.
 *
 * <p>Invariants: level 0 is ordered newest first (its files may overlap; a newer file's versions
 * shadow an older file's); every other level is ordered by smallest key and its files' key ranges
 * do not overlap, so at most one file per level can hold a given key.
 *
 * <p>Thread-safe. Reference counted: {@link #tryRetain} / {@link #release}; the version set holds
 * one reference to the current version.
 */
public final class Version {
  private static final Comparator<FileMetadata> NEWEST_FIRST =
      Comparator.comparingLong((FileMetadata f) -> f.properties().largestSequence())
          .thenComparingLong(FileMetadata::number)
          .reversed();
  private static final Comparator<FileMetadata> BY_SMALLEST_KEY =
      (a, b) -> Keys.compare(a.smallestKey(), b.smallestKey());

  private final List<List<FileMetadata>> levels;
  private final java.util.SortedMap<Long, BlobFileMeta> blobs;
  private final long level0TableBytes;
  private final RefCount refs = new RefCount();
  private final VersionSet owner;

  Version(
      List<List<FileMetadata>> levels,
      java.util.SortedMap<Long, BlobFileMeta> blobs,
      long level0TableBytes,
      VersionSet owner) {
    this.levels = levels;
    this.blobs = blobs;
    this.level0TableBytes = level0TableBytes;
    this.owner = owner;
  }

  /**
   * The size of a table that a flush adds to level 0, averaged over recent flushes (each new file
   * moves it an eighth of the way); 0 before the first. Files an edit adds to level 0 while
   * removing some from it (a rewrite, not a flush) are not counted. Replaying the manifest
   * recomputes it, so it needs no record of its own.
   */
  public long level0TableBytes() {
    return level0TableBytes;
  }

  /** The blob files this version references, by number. */
  public java.util.SortedMap<Long, BlobFileMeta> blobFiles() {
    return blobs;
  }

  /** An empty version owned by nobody (for tools and tests; its release deletes nothing). */
  public static Version empty(int numLevels) {
    return empty(numLevels, null);
  }

  /** The version after {@code edit}, owned by nobody (for tools and tests). */
  public Version apply(VersionEdit edit) {
    return apply(edit, null);
  }

  static Version empty(int numLevels, VersionSet owner) {
    List<List<FileMetadata>> l = new ArrayList<>();
    for (int i = 0; i < numLevels; i++) {
      l.add(List.of());
    }
    return new Version(List.copyOf(l), java.util.Collections.emptySortedMap(), 0, owner);
  }

  public int numLevels() {
    return levels.size();
  }

  public List<FileMetadata> files(int level) {
    return levels.get(level);
  }

  public long levelBytes(int level) {
    long sum = 0;
    for (FileMetadata f : levels.get(level)) {
      sum += f.size();
    }
    return sum;
  }

  public List<FileMetadata> allFiles() {
    List<FileMetadata> all = new ArrayList<>();
    levels.forEach(all::addAll);
    return all;
  }

  /** Files of {@code level} whose key range intersects {@code [start, end]} (null = unbounded). */
  public List<FileMetadata> overlapping(int level, byte[] start, byte[] end) {
    List<FileMetadata> out = new ArrayList<>();
    for (FileMetadata f : levels.get(level)) {
      if (f.overlaps(start, end)) {
        out.add(f);
      }
    }
    return out;
  }

  /** The one file of a level >= 1 that may hold {@code key}, or null. */
  public FileMetadata fileFor(int level, byte[] key) {
    List<FileMetadata> files = levels.get(level);
    int lo = 0;
    int hi = files.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Keys.compare(files.get(mid).largestKey(), key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < files.size() && Keys.compare(files.get(lo).smallestKey(), key) <= 0) {
      return files.get(lo);
    }
    return null;
  }

  /** The deepest level holding any file, or -1 when the version is empty. */
  public int deepestNonEmptyLevel() {
    for (int l = levels.size() - 1; l >= 0; l--) {
      if (!levels.get(l).isEmpty()) {
        return l;
      }
    }
    return -1;
  }

  /**
   * The version after {@code edit}.
   *
   * @throws IllegalStateException if the edit removes a file that is not there, or breaks the
   *     non-overlap invariant of a level (a bug, or a damaged manifest)
   */
  Version apply(VersionEdit edit, VersionSet newOwner) {
    List<List<FileMetadata>> next = new ArrayList<>();
    for (List<FileMetadata> l : levels) {
      next.add(new ArrayList<>(l));
    }
    for (VersionEdit.Removed r : edit.removed()) {
      checkLevel(r.level());
      boolean gone = next.get(r.level()).removeIf(f -> f.number() == r.number());
      if (!gone) {
        throw new IllegalStateException(
            "edit removes file " + r.number() + " absent from level " + r.level());
      }
    }
    Set<Long> present = new HashSet<>();
    next.forEach(l -> l.forEach(f -> present.add(f.number())));
    boolean rewritesLevel0 = edit.removed().stream().anyMatch(r -> r.level() == 0);
    long flushed = level0TableBytes;
    for (VersionEdit.Added a : edit.added()) {
      checkLevel(a.level());
      if (!present.add(a.file().number())) {
        throw new IllegalStateException("edit adds file " + a.file().number() + " twice");
      }
      next.get(a.level()).add(a.file());
      if (a.level() == 0 && !rewritesLevel0) {
        long size = a.file().size();
        flushed = flushed == 0 ? size : flushed + (size - flushed) / 8;
      }
    }
    next.get(0).sort(NEWEST_FIRST);
    for (int l = 1; l < next.size(); l++) {
      List<FileMetadata> files = next.get(l);
      files.sort(BY_SMALLEST_KEY);
      for (int i = 1; i < files.size(); i++) {
        if (Keys.compare(files.get(i - 1).largestKey(), files.get(i).smallestKey()) >= 0) {
          throw new IllegalStateException(
              "files "
                  + files.get(i - 1).number()
                  + " and "
                  + files.get(i).number()
                  + " overlap on level "
                  + l);
        }
      }
    }
    java.util.TreeMap<Long, BlobFileMeta> nextBlobs = new java.util.TreeMap<>(blobs);
    for (BlobFileMeta b : edit.blobsAdded()) {
      if (nextBlobs.put(b.number(), b) != null || present.contains(b.number())) {
        throw new IllegalStateException("edit adds blob file " + b.number() + " twice");
      }
    }
    for (VersionEdit.BlobGarbage g : edit.blobGarbage()) {
      BlobFileMeta b = nextBlobs.get(g.number());
      if (b == null) {
        throw new IllegalStateException("edit counts garbage in absent blob file " + g.number());
      }
      BlobFileMeta more = b.plusGarbage(g.bytes(), g.count());
      if (more.garbageBytes() > more.totalBytes()) {
        throw new IllegalStateException(
            "blob file "
                + g.number()
                + " would hold more garbage ("
                + more.garbageBytes()
                + ") than bytes ("
                + more.totalBytes()
                + ")");
      }
      nextBlobs.put(g.number(), more);
    }
    for (long n : edit.blobsRemoved()) {
      if (nextBlobs.remove(n) == null) {
        throw new IllegalStateException("edit removes absent blob file " + n);
      }
    }
    List<List<FileMetadata>> frozen = new ArrayList<>();
    for (List<FileMetadata> l : next) {
      frozen.add(Collections.unmodifiableList(l));
    }
    return new Version(
        List.copyOf(frozen), Collections.unmodifiableSortedMap(nextBlobs), flushed, newOwner);
  }

  /**
   * The blob files in which {@code edit}'s garbage leaves no live value (every value counted dead)
   * and which the edit does not remove already: nothing points into them once it applies.
   */
  public List<Long> blobFilesEmptiedBy(VersionEdit edit) {
    List<Long> emptied = new ArrayList<>();
    for (VersionEdit.BlobGarbage g : VersionEdit.BlobGarbage.sumByFile(edit.blobGarbage())) {
      BlobFileMeta b = blobs.get(g.number());
      if (b != null
          && !edit.blobsRemoved().contains(g.number())
          && b.garbageCount() + g.count() == b.totalCount()
          && b.garbageBytes() + g.bytes() == b.totalBytes()) {
        emptied.add(g.number());
      }
    }
    return emptied;
  }

  private void checkLevel(int level) {
    if (level < 0 || level >= levels.size()) {
      throw new IllegalStateException("level " + level + " outside [0, " + levels.size() + ")");
    }
  }

  /** Take a reference unless the version is already dead; lock-free. */
  public boolean tryRetain() {
    return refs.tryRetain();
  }

  public void release() {
    if (refs.release("version") && owner != null) {
      owner.versionDied(this);
    }
  }
}
