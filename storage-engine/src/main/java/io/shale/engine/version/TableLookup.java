package io.shale.engine.version;

import io.shale.engine.key.StoredValue;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Point lookup in a version's tables: every level-0 table whose range holds the key, newest first,
 * then the one candidate table of each deeper level; the first version of the key found wins
 * (tombstones included). Each table's Bloom filter is probed before its blocks are read.
 */
public final class TableLookup {
  /** What a lookup reports about its filter probes and the tables it searched. */
  public interface Probes {
    /** One Bloom probe on {@code level}: {@code passed} if the filter said maybe. */
    void bloomCheck(int level, boolean passed);

    /** The filter passed but the table had no version of the key. */
    void bloomFalsePositive(int level);

    /** How many tables' data blocks one lookup searched. */
    void tablesTouched(int n);
  }

  private final Path dir;
  private final TableCache tables;
  private final Probes probes;

  public TableLookup(Path dir, TableCache tables, Probes probes) {
    this.dir = dir;
    this.tables = tables;
    this.probes = probes;
  }

  /**
   * The newest version of {@code key} at {@code sequence} in {@code version}, values not yet
   * resolved from blob files; null if none. Precondition: the caller holds {@code version}.
   */
  public StoredValue get(Version version, byte[] key, long sequence) {
    int[] touched = new int[1];
    try {
      for (FileMetadata f : version.files(0)) {
        if (f.overlaps(key, key)) {
          StoredValue v = lookup(0, f, key, sequence, touched);
          if (v != null) {
            return v;
          }
        }
      }
      for (int level = 1; level < version.numLevels(); level++) {
        FileMetadata f = version.fileFor(level, key);
        if (f != null) {
          StoredValue v = lookup(level, f, key, sequence, touched);
          if (v != null) {
            return v;
          }
        }
      }
      return null;
    } finally {
      probes.tablesTouched(touched[0]);
    }
  }

  private StoredValue lookup(int level, FileMetadata f, byte[] key, long sequence, int[] touched) {
    TableReader r;
    try {
      r = tables.acquire(f.number());
    } catch (IOException e) {
      throw new UncheckedIOException("opening table " + f.number() + " in " + dir, e);
    }
    try {
      boolean maybe = r.mayContain(key);
      probes.bloomCheck(level, maybe);
      if (!maybe) {
        return null;
      }
      touched[0]++;
      StoredValue v = r.get(key, sequence);
      if (v == null) {
        probes.bloomFalsePositive(level);
      }
      return v;
    } finally {
      r.release();
    }
  }
}
