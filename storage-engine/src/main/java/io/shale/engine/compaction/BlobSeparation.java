package io.shale.engine.compaction;

import io.shale.engine.blob.BlobFileWriter;
import io.shale.engine.blob.BlobOptions;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.iterator.ValueSlice;
import io.shale.engine.key.ValueKind;
import io.shale.engine.version.BlobFileMeta;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * At flush, moves values of at least {@code min_value_size_bytes} into blob files and leaves a
 * pointer in the table. Values are written in key order, so a later scan reads its blob file
 * forward. A new blob file starts past {@code file_size}. Not thread-safe (one flush).
 */
public final class BlobSeparation implements TableOutput.ValueRewriter {
  private final BlobOptions options;
  private final LongSupplier newFileNumber;
  private final LongFunction<Path> pathOf;
  private final LongConsumer ioCharge;
  private final List<BlobFileMeta> finished = new ArrayList<>();
  private final List<BlobFileWriter> all = new ArrayList<>();
  private BlobFileWriter current;

  public BlobSeparation(
      BlobOptions options,
      LongSupplier newFileNumber,
      LongFunction<Path> pathOf,
      LongConsumer ioCharge) {
    this.options = options;
    this.newFileNumber = newFileNumber;
    this.pathOf = pathOf;
    this.ioCharge = ioCharge;
  }

  @Override
  public TableOutput.Rewritten rewrite(byte[] key, ValueKind kind, ValueSlice value)
      throws IOException {
    if (kind != ValueKind.VALUE || value.length() < options.minValueSizeBytes()) {
      return null;
    }
    if (current != null && current.size() >= options.fileSizeBytes()) {
      close(current);
      current = null;
    }
    if (current == null) {
      long n = newFileNumber.getAsLong();
      current = new BlobFileWriter(pathOf.apply(n), n, ioCharge);
      all.add(current);
    }
    BlobPointer p = current.add(key, value.array(), value.offset(), value.length());
    return new TableOutput.Rewritten(ValueKind.BLOB_POINTER, p.encode());
  }

  private void close(BlobFileWriter w) throws IOException {
    long size = w.finish();
    finished.add(new BlobFileMeta(w.number(), size, w.valueBytes(), w.records(), 0, 0));
  }

  @Override
  public List<BlobFileMeta> finish() throws IOException {
    if (current != null) {
      close(current);
      current = null;
    }
    return List.copyOf(finished);
  }

  @Override
  public void abandon() {
    for (BlobFileWriter w : all) {
      w.abandon();
    }
  }
}
