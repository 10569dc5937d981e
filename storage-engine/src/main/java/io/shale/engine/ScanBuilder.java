package io.shale.engine;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.iterator.VisibleEntryIterator;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.memtable.ReadState;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.FileMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a scan over a read state: one source per memtable, one per overlapping level-0 table and
 * one {@link LevelIterator} per deeper level, merged, then filtered to what is visible at the
 * scan's sequence. The scan owns one reference to the read state and the table readers it opened,
 * and releases them when closed (or here, if building fails).
 */
final class ScanBuilder {
  private final Path dir;
  private final TableCache tables;
  private final BlobFiles blobFiles;
  private final int blobReadaheadBytes;

  ScanBuilder(Path dir, TableCache tables, BlobFiles blobFiles, int blobReadaheadBytes) {
    this.dir = dir;
    this.tables = tables;
    this.blobFiles = blobFiles;
    this.blobReadaheadBytes = blobReadaheadBytes;
  }

  /**
   * Precondition: {@code rs} is retained; this call takes over that reference. {@code onClose} runs
   * when the iterator closes (not when this throws).
   */
  ScanIterator build(ReadState rs, long sequence, ScanOptions o, Runnable onClose) {
    Direction d = o.reverse() ? Direction.REVERSE : Direction.FORWARD;
    List<InternalIterator> sources = new ArrayList<>();
    List<TableReader> readers = new ArrayList<>();
    try {
      sources.add(rs.mutable().iterator(d));
      for (Memtable m : rs.immutablesNewestFirst()) {
        sources.add(m.iterator(d));
      }
      for (FileMetadata f : rs.version().files(0)) {
        if (f.overlaps(o.start(), o.end())) {
          TableReader r = tables.acquire(f.number());
          readers.add(r);
          sources.add(r.iterator(d));
        }
      }
      for (int level = 1; level < rs.version().numLevels(); level++) {
        List<FileMetadata> files = rs.version().overlapping(level, o.start(), o.end());
        if (!files.isEmpty()) {
          sources.add(new LevelIterator(files, tables, d));
        }
      }
    } catch (IOException | RuntimeException e) {
      sources.forEach(InternalIterator::close);
      readers.forEach(TableReader::release);
      rs.release();
      if (e instanceof IOException io) {
        throw new UncheckedIOException("opening tables for a scan in " + dir, io);
      }
      throw (RuntimeException) e;
    }
    VisibleEntryIterator visible =
        new VisibleEntryIterator(
            new MergingIterator(sources, d),
            d,
            o.start(),
            o.end(),
            sequence,
            o.limit(),
            o.keysOnly());
    return new ScanIterator(
        visible,
        blobFiles,
        blobReadaheadBytes,
        () -> {
          readers.forEach(TableReader::release);
          rs.release();
          onClose.run();
        });
  }
}
