package io.shale.engine.compaction;

import io.shale.engine.blob.BlobPointer;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.ValueSlice;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import io.shale.engine.sstable.TableBuilder;
import io.shale.engine.sstable.TableProperties;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Writes a sorted stream of versions into new tables of one level: keeps only the newest version of
 * each key, drops tombstones that {@code canDropTombstone} allows, and cuts a new file at the first
 * key boundary after {@code targetFileSize} bytes or {@link #MAX_ENTRIES_PER_TABLE} entries (so a
 * key never spans two files of a level). Used by flushes, compactions and blob GC alike.
 *
 * <p>Every blob pointer it drops (an older version, or a version under a dropped tombstone) is
 * counted as garbage of its blob file: this is how the engine knows each blob file's dead bytes
 * exactly. A {@link ValueRewriter} may replace values on the way (blob separation at flush, blob
 * relocation in GC).
 */
public final class TableOutput {
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> pathOf;
  private final TableWriteOptions tableOptions;
  private final int level;
  private final int bloomBitsPerKey;
  private final long targetFileSize;
  private final LongConsumer ioCharge;

  private static final ValueSlice NO_VALUE = ValueSlice.of(new byte[0]);

  /**
   * The most entries one table gets. A table being built holds an 8-byte hash of every key for its
   * Bloom filter, on the heap until it is finished: with small keys a 64 MiB table held 5 M of
   * them, 40 MiB (and 96 MiB while the array grew), which ran 512 MiB nodes out of heap in a bulk
   * load of small keys. 1 M caps a table build at 12 MiB of heap ({@link #BUILD_HEAP_BYTES}).
   */
  public static final int MAX_ENTRIES_PER_TABLE = 1 << 20;

  /** The most heap one table build takes for its key hashes (the array and its last copy). */
  public static final long BUILD_HEAP_BYTES = 12L * MAX_ENTRIES_PER_TABLE;

  /** Replaces an entry's value while it is written (may write elsewhere, e.g. a blob file). */
  public interface ValueRewriter {
    /**
     * The entry to write instead, or null to write it unchanged. {@code value} is a slice of the
     * source's block or memtable, valid during the call only: copy what must outlive it.
     */
    Rewritten rewrite(byte[] key, ValueKind kind, ValueSlice value) throws IOException;

    /** Finish what the rewriter wrote (fsync its files); returns them. Called by the owner. */
    List<BlobFileMeta> finish() throws IOException;

    /** Delete whatever the rewriter wrote (the output is not published). Called by the owner. */
    void abandon();
  }

  /** An entry's new kind and value. */
  public record Rewritten(ValueKind kind, byte[] value) {}

  public TableOutput(
      LongSupplier newFileNumber,
      LongFunction<Path> pathOf,
      TableWriteOptions tableOptions,
      int level,
      int bloomBitsPerKey,
      long targetFileSize,
      LongConsumer ioCharge) {
    this.newFileNumber = newFileNumber;
    this.pathOf = pathOf;
    this.tableOptions = tableOptions;
    this.level = level;
    this.bloomBitsPerKey = bloomBitsPerKey;
    this.targetFileSize = targetFileSize;
    this.ioCharge = ioCharge;
  }

  /** Where output table {@code number} is written. */
  public Path pathOf(long number) {
    return pathOf.apply(number);
  }

  public long targetFileSize() {
    return targetFileSize;
  }

  /**
   * What the write consumed and produced.
   *
   * @param blobGarbage dead bytes found in existing blob files, by file
   */
  public record Result(
      List<FileMetadata> files,
      long entriesIn,
      long entriesDropped,
      long bytesWritten,
      List<VersionEdit.BlobGarbage> blobGarbage) {}

  /**
   * Drain {@code source} (positioned by this method) into tables. On any failure every file this
   * call created is deleted and the exception propagates; nothing is published here.
   *
   * @param rewriter null to copy values as they are; its files are the caller's to finish or
   *     abandon
   * @param stop polled between keys; when it returns true the write is abandoned with an {@link
   *     IOException}
   */
  public Result write(
      InternalIterator source,
      Predicate<byte[]> canDropTombstone,
      ValueRewriter rewriter,
      BooleanSupplier stop)
      throws IOException {
    return write(source, canDropTombstone, rewriter, stop, key -> false);
  }

  /**
   * As {@link #write(InternalIterator, Predicate, ValueRewriter, BooleanSupplier)}, also cutting a
   * new file before every key written for which {@code cutBefore} is true (it sees each written key
   * once, in order; see {@link GrandparentBoundary}).
   */
  public Result write(
      InternalIterator source,
      Predicate<byte[]> canDropTombstone,
      ValueRewriter rewriter,
      BooleanSupplier stop,
      Predicate<byte[]> cutBefore)
      throws IOException {
    List<FileMetadata> done = new ArrayList<>();
    Map<Long, long[]> garbage = new TreeMap<>();
    TableBuilder builder = null;
    long in = 0;
    long dropped = 0;
    long written = 0;
    try {
      source.seekToFirst();
      byte[] lastKey = null;
      while (source.valid()) {
        byte[] key = source.userKey();
        ValueKind kind = source.kind();
        in++;
        if (lastKey != null && Keys.compare(key, lastKey) == 0) {
          dropped++; // an older version of a key already written (or dropped)
          countGarbage(garbage, kind, source);
          source.next();
          continue;
        }
        lastKey = key;
        if (stop.getAsBoolean()) {
          throw new IOException("table output stopped: the engine is closing");
        }
        if (kind == ValueKind.TOMBSTONE && canDropTombstone.test(key)) {
          dropped++;
          source.next();
          continue;
        }
        ValueSlice value;
        if (kind == ValueKind.TOMBSTONE) {
          value = NO_VALUE;
        } else if (rewriter != null) {
          // Most entries are left as they are: hand the rewriter the slice, copy nothing.
          value = source.valueSlice();
          Rewritten r = rewriter.rewrite(key, kind, value);
          if (r != null) {
            kind = r.kind();
            value = ValueSlice.of(r.value());
          }
        } else {
          value = source.valueSlice(); // in the input block: copied into the output, never kept
        }
        boolean cut = cutBefore.test(key);
        if (builder != null
            && (cut
                || builder.estimatedFileSize() >= targetFileSize
                || builder.entries() >= MAX_ENTRIES_PER_TABLE)) {
          FileMetadata f = finish(builder);
          written += f.size();
          done.add(f);
          builder = null;
        }
        if (builder == null) {
          long number = newFileNumber.getAsLong();
          builder =
              new TableBuilder(
                  pathOf.apply(number), tableOptions, level, bloomBitsPerKey, ioCharge);
        }
        builder.add(key, source.sequence(), kind, value.array(), value.offset(), value.length());
        source.next();
      }
      if (builder != null) {
        FileMetadata f = finish(builder);
        written += f.size();
        done.add(f);
        builder = null;
      }
      List<VersionEdit.BlobGarbage> g = new ArrayList<>();
      garbage.forEach((n, v) -> g.add(new VersionEdit.BlobGarbage(n, v[0], v[1])));
      return new Result(done, in, dropped, written, g);
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

  private static void countGarbage(
      Map<Long, long[]> garbage, ValueKind kind, InternalIterator source) {
    if (kind == ValueKind.BLOB_POINTER) {
      ValueSlice v = source.valueSlice();
      BlobPointer p = BlobPointer.decode(v.array(), v.offset(), v.length());
      long[] g = garbage.computeIfAbsent(p.fileNumber(), n -> new long[2]);
      g[0] += p.length();
      g[1]++;
    }
  }

  private FileMetadata finish(TableBuilder b) throws IOException {
    TableProperties props = b.finish();
    Path p = b.file();
    long number = FileNames.parseTable(p.getFileName().toString());
    return new FileMetadata(number, Files.size(p), props);
  }
}
