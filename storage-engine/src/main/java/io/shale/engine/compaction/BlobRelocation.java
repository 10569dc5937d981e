package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFileWriter;
import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.key.ValueKind;
import io.shale.engine.version.BlobFileMeta;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * In blob GC, copies every value still referenced from the collected blob file into a new blob file
 * and returns the new pointer; pointers into other files pass unchanged. The bytes written are
 * charged to the I/O budget. Not thread-safe (one GC job).
 */
public final class BlobRelocation implements TableOutput.ValueRewriter {
  private final long collected;
  private final BlobFiles blobs;
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> pathOf;
  private final LongConsumer ioCharge;
  private BlobFileWriter target;
  private long relocatedBytes;

  public BlobRelocation(
      long collectedFile,
      BlobFiles blobs,
      LongSupplier newFileNumber,
      LongFunction<Path> pathOf,
      LongConsumer ioCharge) {
    this.collected = collectedFile;
    this.blobs = blobs;
    this.newFileNumber = newFileNumber;
    this.pathOf = pathOf;
    this.ioCharge = ioCharge;
  }

  @Override
  public TableOutput.Rewritten rewrite(byte[] key, ValueKind kind, byte[] value)
      throws IOException {
    if (kind != ValueKind.BLOB_POINTER) {
      return null;
    }
    BlobPointer p = BlobPointer.decode(value);
    if (p.fileNumber() != collected) {
      return null;
    }
    byte[] v = blobs.read(p);
    if (target == null) {
      long n = newFileNumber.getAsLong();
      target = new BlobFileWriter(pathOf.apply(n), n, ioCharge);
    }
    relocatedBytes += v.length;
    return new TableOutput.Rewritten(ValueKind.BLOB_POINTER, target.add(key, v).encode());
  }

  /** Value bytes copied to the new file. */
  public long relocatedBytes() {
    return relocatedBytes;
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
