package io.shale.engine;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.FileMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Iterates a level of non-overlapping files (level 1 and deeper) as one sequence, opening one file
 * at a time. Files are ordered by key, so in reverse the walk starts from the last file.
 */
final class LevelIterator implements InternalIterator {
  private final List<FileMetadata> files;
  private final TableCache tables;
  private final Direction direction;
  private int index = -1;
  private TableReader reader;
  private InternalIterator current;

  LevelIterator(List<FileMetadata> files, TableCache tables, Direction direction) {
    this.files = files;
    this.tables = tables;
    this.direction = direction;
  }

  private void open(int i) {
    closeCurrent();
    index = i;
    if (i < 0 || i >= files.size()) {
      return;
    }
    try {
      reader = tables.acquire(files.get(i).number());
    } catch (IOException e) {
      throw new UncheckedIOException("opening table " + files.get(i).number(), e);
    }
    current = reader.iterator(direction);
  }

  private void closeCurrent() {
    if (reader != null) {
      current.close();
      reader.release();
      reader = null;
      current = null;
    }
  }

  private int step() {
    return direction == Direction.FORWARD ? 1 : -1;
  }

  private void skipEmptyFiles() {
    while (current != null && !current.valid()) {
      open(index + step());
      if (current != null) {
        current.seekToFirst();
      }
    }
  }

  @Override
  public boolean valid() {
    return current != null && current.valid();
  }

  @Override
  public void seekToFirst() {
    open(direction == Direction.FORWARD ? 0 : files.size() - 1);
    if (current != null) {
      current.seekToFirst();
    }
    skipEmptyFiles();
  }

  @Override
  public void seek(byte[] target) {
    int i;
    if (direction == Direction.FORWARD) {
      i = firstIndex(f -> Keys.compare(f.largestKey(), target) >= 0);
    } else {
      i = firstIndex(f -> Keys.compare(f.smallestKey(), target) >= 0) - 1;
    }
    open(i);
    if (current != null) {
      current.seek(target);
    }
    skipEmptyFiles();
  }

  /** Binary search: the first file for which {@code p} holds (p is monotone over the files). */
  private int firstIndex(java.util.function.Predicate<FileMetadata> p) {
    int lo = 0;
    int hi = files.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (p.test(files.get(mid))) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  @Override
  public void next() {
    current.next();
    skipEmptyFiles();
  }

  @Override
  public byte[] userKey() {
    return current.userKey();
  }

  @Override
  public long sequence() {
    return current.sequence();
  }

  @Override
  public ValueKind kind() {
    return current.kind();
  }

  @Override
  public byte[] value() {
    return current.value();
  }

  @Override
  public io.shale.engine.iterator.ValueSlice valueSlice() {
    return current.valueSlice();
  }

  @Override
  public void close() {
    closeCurrent();
  }
}
