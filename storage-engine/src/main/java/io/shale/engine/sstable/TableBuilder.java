package io.shale.engine.sstable;

import io.shale.engine.bloom.BloomFilter;
import io.shale.engine.bloom.KeyHash;
import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Checksums;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Writes one table. Preconditions: entries are added in internal order (user key ascending, then
 * sequence descending); {@link #finish} or {@link #abandon} is called exactly once. Not
 * thread-safe. The file is fsynced by {@link #finish}; publishing it (the manifest edit and the
 * directory fsync) is the caller's job.
 */
public final class TableBuilder {
  private static final int WRITE_BUFFER = 256 << 10;

  private final Path file;
  private final FileChannel channel;
  private final TableWriteOptions options;
  private final int level;
  private final int bloomBitsPerKey;
  private final BlockBuilder data;
  private final BlockBuilder index = new BlockBuilder(1);
  private final ByteSink compressed = new ByteSink(8192);
  private final io.shale.engine.io.BufferedAppender out;
  private final byte[] trailerBuf = new byte[BlockHandle.TRAILER_SIZE];
  private final ByteSink handleBuf = new ByteSink(20);
  private long[] hashes = new long[1024];
  private int hashCount;
  private byte[] lastKey;
  private byte[] smallestKey;
  private long entries;
  private long tombstones;
  private long rawKeyBytes;
  private long rawValueBytes;
  private long dataBlocks;
  private long smallestSeq = Long.MAX_VALUE;
  private long largestSeq = Long.MIN_VALUE;
  private long blobBytes;
  private final java.util.TreeSet<Long> blobFiles = new java.util.TreeSet<>();
  private final java.util.function.LongConsumer ioCharge;

  public TableBuilder(Path file, TableWriteOptions options, int level, int bloomBitsPerKey)
      throws IOException {
    this(file, options, level, bloomBitsPerKey, n -> {});
  }

  /**
   * @param ioCharge told the size of every write (the background I/O budget)
   */
  public TableBuilder(
      Path file,
      TableWriteOptions options,
      int level,
      int bloomBitsPerKey,
      java.util.function.LongConsumer ioCharge)
      throws IOException {
    this.ioCharge = ioCharge;
    this.file = file;
    this.options = options;
    this.level = level;
    this.bloomBitsPerKey = bloomBitsPerKey;
    this.data = new BlockBuilder(options.restartInterval());
    this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    this.out = new io.shale.engine.io.BufferedAppender(channel, WRITE_BUFFER, ioCharge);
  }

  public Path file() {
    return file;
  }

  public void add(byte[] userKey, long sequence, ValueKind kind, byte[] value) throws IOException {
    add(userKey, sequence, kind, value, 0, value.length);
  }

  /**
   * Add {@code value[valueOffset, valueOffset + valueLength)}, copied before this returns.
   * Precondition: {@code userKey} is not before the previous key added, and this builder may keep
   * it (it is not reused by the caller).
   */
  public void add(
      byte[] userKey, long sequence, ValueKind kind, byte[] value, int valueOffset, int valueLength)
      throws IOException {
    if (lastKey != null && Keys.compare(lastKey, userKey) > 0) {
      throw new IllegalStateException("keys added out of order to " + file);
    }
    if (lastKey == null || !Arrays.equals(lastKey, userKey)) {
      if (hashCount == hashes.length) {
        hashes = Arrays.copyOf(hashes, hashCount * 2);
      }
      hashes[hashCount++] = KeyHash.hash64(userKey);
    }
    if (smallestKey == null) {
      smallestKey = userKey;
    }
    data.add(userKey, Keys.trailer(sequence, kind), value, valueOffset, valueLength);
    lastKey = userKey;
    entries++;
    if (kind == ValueKind.TOMBSTONE) {
      tombstones++;
    } else if (kind == ValueKind.BLOB_POINTER) {
      io.shale.engine.blob.BlobPointer p =
          io.shale.engine.blob.BlobPointer.decode(value, valueOffset, valueLength);
      blobBytes += p.length();
      blobFiles.add(p.fileNumber());
    }
    rawKeyBytes += userKey.length;
    rawValueBytes += valueLength;
    smallestSeq = Math.min(smallestSeq, sequence);
    largestSeq = Math.max(largestSeq, sequence);
    if (data.estimatedSize() >= options.blockSize()) {
      flushDataBlock();
    }
  }

  public long entries() {
    return entries;
  }

  /**
   * What the file would weigh if finished now: bytes written, the open block, and the filter, index
   * and footer still to come. Compaction cuts output files on this.
   */
  public long estimatedFileSize() {
    long filter = bloomBitsPerKey == 0 ? 0 : ((long) hashCount * bloomBitsPerKey + 7) / 8 + 1;
    return out.position()
        + data.estimatedSize()
        + index.estimatedSize()
        + filter
        + 3L * BlockHandle.TRAILER_SIZE
        + Footer.SIZE
        + 128;
  }

  private void flushDataBlock() throws IOException {
    if (data.isEmpty()) {
      return;
    }
    BlockHandle h = writeBlock(data.finish(), options.compression());
    data.reset();
    dataBlocks++;
    handleBuf.reset();
    handleBuf.putVarint(h.offset()).putVarint(h.size());
    index.add(lastKey, 0, handleBuf.array(), 0, handleBuf.size());
  }

  private BlockHandle writeBlock(ByteSink contents, Compression compression) throws IOException {
    byte[] bytes = contents.array();
    int len = contents.size();
    Compression used = Compression.NONE;
    if (compression == Compression.LZ4 && Compression.lz4Compress(bytes, len, compressed)) {
      bytes = compressed.array();
      len = compressed.size();
      used = Compression.LZ4;
    }
    BlockHandle h = new BlockHandle(out.position(), len);
    out.write(bytes, 0, len);
    trailerBuf[0] = (byte) used.code();
    io.shale.engine.io.Varints.writeFixed32(
        trailerBuf, 1, Checksums.crc32c(bytes, 0, len, trailerBuf[0]));
    out.write(trailerBuf, 0, trailerBuf.length);
    return h;
  }

  /**
   * Write the filter, properties, index and footer, fsync and close the file. Precondition: at
   * least one entry was added.
   */
  public TableProperties finish() throws IOException {
    if (entries == 0) {
      throw new IllegalStateException("an empty table cannot be finished: " + file);
    }
    try {
      flushDataBlock();
      ByteSink filterBytes = new ByteSink(0);
      if (bloomBitsPerKey > 0) {
        filterBytes.put(BloomFilter.build(hashes, hashCount, bloomBitsPerKey));
      }
      BlockHandle filter = writeBlock(filterBytes, Compression.NONE);
      TableProperties props =
          new TableProperties(
              entries,
              tombstones,
              rawKeyBytes,
              rawValueBytes,
              dataBlocks,
              filterBytes.size(),
              bloomBitsPerKey,
              smallestKey,
              lastKey,
              smallestSeq,
              largestSeq,
              System.currentTimeMillis(),
              level,
              blobBytes,
              blobFiles.stream().mapToLong(Long::longValue).toArray());
      ByteSink propsBytes = new ByteSink(0).put(props.encode());
      BlockHandle properties = writeBlock(propsBytes, Compression.NONE);
      BlockHandle indexHandle = writeBlock(index.finish(), Compression.NONE);
      byte[] footer = new Footer(indexHandle, filter, properties).encode();
      out.write(footer, 0, footer.length);
      out.flush();
      channel.force(true);
      channel.close();
      out.release();
      return props;
    } catch (IOException | RuntimeException e) {
      abandon();
      throw e;
    }
  }

  /** Close and delete the partial file (after a failure or when the output is not needed). */
  public void abandon() {
    out.release();
    try {
      channel.close();
    } catch (IOException ignored) {
      // the file is deleted next; nothing was published
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // an orphan is removed at the next open
    }
  }
}
