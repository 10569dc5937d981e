package io.shale.engine.version;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.sstable.TableCache;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes table and blob files that no live version lists any more ({@link VersionSet} calls it
 * when the last version holding a file is released), evicting them from the caches first.
 *
 * <p>Invariant: nothing is deleted once the engine is closed. A scan or snapshot left open may
 * release its tables later, when the directory may hold another engine's files under the same
 * numbers (a node swaps a fetched checkpoint in for its engine directory); what is left behind is
 * removed by the next open, which deletes unlisted files.
 */
public final class ObsoleteFiles {
  private static final Logger LOG = LoggerFactory.getLogger(ObsoleteFiles.class);
  private final Path dir;
  private final TableCache tables;
  private final BlobFiles blobs;
  private volatile boolean closed;

  public ObsoleteFiles(Path dir, TableCache tables, BlobFiles blobs) {
    this.dir = dir;
    this.tables = tables;
    this.blobs = blobs;
  }

  /** From now on, delete nothing (the engine closed). */
  public void close() {
    closed = true;
  }

  public void deleteTable(long number) {
    if (closed) {
      return;
    }
    tables.evict(number);
    delete(FileNames.table(dir, number), "table", number);
  }

  public void deleteBlob(long number) {
    if (closed) {
      return;
    }
    blobs.evict(number);
    delete(FileNames.blob(dir, number), "blob file", number);
  }

  private void delete(Path file, String kind, long number) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // Left behind; the next open removes files no version lists.
      LOG.warn("could not delete obsolete {} {} in {}: {}", kind, number, dir, e.toString());
    }
  }
}
