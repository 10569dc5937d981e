package io.shale.engine.compaction;

import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import io.shale.engine.sstable.TableBuilder;
import io.shale.engine.sstable.TableProperties;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.FileMetadata;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Writes a sorted stream of versions into new tables of one level: keeps only the newest version
 * of each key, drops tombstones that {@code canDropTombstone} allows, and cuts a new file at the
 * first key boundary after {@code targetFileSize} bytes (so a key never spans two files of a
 * level). Used by flushes and compactions alike.
 */
public final class TableOutput {
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> pathOf;
  private final TableWriteOptions tableOptions;
  private final int level;
  private final int bloomBitsPerKey;
  private final long targetFileSize;

  public TableOutput(LongSupplier newFileNumber, LongFunction<Path> pathOf,
      TableWriteOptions tableOptions, int level, int bloomBitsPerKey, long targetFileSize) {
    this.newFileNumber = newFileNumber;
    this.pathOf = pathOf;
    this.tableOptions = tableOptions;
    this.level = level;
    this.bloomBitsPerKey = bloomBitsPerKey;
    this.targetFileSize = targetFileSize;
  }

  /** Counts of what the write consumed and produced. */
  public record Result(List<FileMetadata> files, long entriesIn, long entriesDropped,
      long bytesWritten) {}

  /**
   * Drain {@code source} (positioned by this method) into tables. On any failure every file this
   * call created is deleted and the exception propagates; nothing is published here.
   *
   * @param stop polled between keys; when it returns true the write is abandoned with an
   *     {@link IOException}
   */
  public Result write(InternalIterator source, Predicate<byte[]> canDropTombstone,
      BooleanSupplier stop) throws IOException {
    List<FileMetadata> done = new ArrayList<>();
    TableBuilder builder = null;
    long in = 0;
    long dropped = 0;
    long written = 0;
    try {
      source.seekToFirst();
      byte[] lastKey = null;
      while (source.valid()) {
        byte[] key = source.userKey();
        in++;
        if (lastKey != null && Keys.compare(key, lastKey) == 0) {
          dropped++; // an older version of a key already written
          source.next();
          continue;
        }
        lastKey = key;
        if (stop.getAsBoolean()) {
          throw new IOException("table output stopped: the engine is closing");
        }
        ValueKind kind = source.kind();
        if (kind == ValueKind.TOMBSTONE && canDropTombstone.test(key)) {
          dropped++;
          source.next();
          continue;
        }
        if (builder != null && builder.estimatedFileSize() >= targetFileSize) {
          FileMetadata f = finish(builder);
          written += f.size();
          done.add(f);
          builder = null;
        }
        if (builder == null) {
          long number = newFileNumber.getAsLong();
          builder = new TableBuilder(pathOf.apply(number), tableOptions, level, bloomBitsPerKey);
        }
        builder.add(key, source.sequence(), kind,
            kind == ValueKind.TOMBSTONE ? new byte[0] : source.value());
        source.next();
      }
      if (builder != null) {
        FileMetadata f = finish(builder);
        written += f.size();
        done.add(f);
        builder = null;
      }
      return new Result(done, in, dropped, written);
    } catch (IOException | RuntimeException e) {
      if (builder != null) {
        builder.abandon();
      }
      for (FileMetadata f : done) {
        Files.deleteIfExists(pathOf.apply(f.number()));
      }
      throw e;
    }
  }

  private FileMetadata finish(TableBuilder b) throws IOException {
    TableProperties props = b.finish();
    Path p = b.file();
    long number = io.shale.engine.version.FileNames.parseTable(p.getFileName().toString());
    return new FileMetadata(number, Files.size(p), props);
  }
}
