package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFileWriter;
import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.iterator.ValueSlice;
import io.shale.engine.key.ValueKind;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.VersionEdit;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

/**
 * Copies every value whose pointer leads into a blob file being collected into a new blob file and
 * returns the new pointer; pointers into other files pass unchanged. Used by blob GC (one file, its
 * tables rewritten) and by every compaction (the files whose garbage reached the GC threshold, as
 * RocksDB relocates blobs during the compactions it runs anyway). Each value moved out is counted
 * as garbage of the file it left ({@link #movedOut}), so a file is dropped once nothing points into
 * it. The bytes written are charged to the I/O budget. Not thread-safe (one job).
 */
public final class BlobRelocation implements TableOutput.ValueRewriter {
  private final LongPredicate collected;
  private final BlobFiles blobs;
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> pathOf;
  private final LongConsumer ioCharge;
  private final Map<Long, long[]> moved = new TreeMap<>();
  private BlobFileWriter target;
  private long relocatedBytes;

  /**
   * @param collected true for the blob files whose values are moved
   */
  public BlobRelocation(
      LongPredicate collected,
      BlobFiles blobs,
      LongSupplier newFileNumber,
      LongFunction<Path> pathOf,
      LongConsumer ioCharge) {
    this.collected = collected;
    this.blobs = blobs;
    this.newFileNumber = newFileNumber;
    this.pathOf = pathOf;
    this.ioCharge = ioCharge;
  }

  @Override
  public TableOutput.Rewritten rewrite(byte[] key, ValueKind kind, ValueSlice value)
      throws IOException {
    if (kind != ValueKind.BLOB_POINTER) {
      return null;
    }
    BlobPointer p = BlobPointer.decode(value.array(), value.offset(), value.length());
    if (!collected.test(p.fileNumber())) {
      return null;
    }
    byte[] v = blobs.read(p, io.shale.engine.io.FileReads.Cause.COMPACTION);
    if (target == null) {
      long n = newFileNumber.getAsLong();
      target = new BlobFileWriter(pathOf.apply(n), n, ioCharge);
    }
    relocatedBytes += v.length;
    long[] m = moved.computeIfAbsent(p.fileNumber(), f -> new long[2]);
    m[0] += p.length();
    m[1]++;
    return new TableOutput.Rewritten(ValueKind.BLOB_POINTER, target.add(key, v).encode());
  }

  /** Value bytes copied to the new file. */
  public long relocatedBytes() {
    return relocatedBytes;
  }

  /** The values moved out of each collected file: garbage there once the output is published. */
  public List<VersionEdit.BlobGarbage> movedOut() {
    List<VersionEdit.BlobGarbage> g = new ArrayList<>();
    moved.forEach((n, m) -> g.add(new VersionEdit.BlobGarbage(n, m[0], m[1])));
    return g;
  }

  @Override
  public List<BlobFileMeta> finish() throws IOException {
    if (target == null) {
      return List.of();
    }
    long size = target.finish();
    return List.of(
        new BlobFileMeta(target.number(), size, target.valueBytes(), target.records(), 0, 0));
  }

  @Override
  public void abandon() {
    if (target != null) {
      target.abandon();
    }
  }
}
