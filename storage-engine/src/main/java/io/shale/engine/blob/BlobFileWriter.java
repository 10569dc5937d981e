package io.shale.engine.blob;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Checksums;
import io.shale.engine.io.Varints;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.LongConsumer;

/**
 * Appends values to a new blob file. Not thread-safe. {@link #finish} writes the footer and fsyncs;
 * until a manifest edit lists the file it is invisible, and an unlisted blob file is deleted at the
 * next open.
 */
public final class BlobFileWriter {
  private static final int WRITE_BUFFER = 256 << 10;

  private final Path file;
  private final long number;
  private final FileChannel channel;
  private final io.shale.engine.io.BufferedAppender out;
  private final ByteSink header = new ByteSink(16);
  private final java.util.zip.CRC32C recordCrc = new java.util.zip.CRC32C();
  private final byte[] crcBytes = new byte[4];
  private long records;
  private long valueBytes;

  /**
   * @param ioCharge told the number of bytes of every write (the I/O budget)
   */
  public BlobFileWriter(Path file, long number, LongConsumer ioCharge) throws IOException {
    this.file = file;
    this.number = number;
    this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    this.out = new io.shale.engine.io.BufferedAppender(channel, WRITE_BUFFER, ioCharge);
    byte[] h = new byte[BlobFormat.HEADER_SIZE];
    Varints.writeFixed64(h, 0, BlobFormat.MAGIC);
    Varints.writeFixed32(h, 8, BlobFormat.VERSION);
    Varints.writeFixed32(h, 12, Checksums.crc32c(h, 0, 12));
    out.write(h, 0, h.length);
  }

  public long number() {
    return number;
  }

  public Path file() {
    return file;
  }

  /** Append {@code key -> value}; returns the pointer the table will store. */
  public BlobPointer add(byte[] key, byte[] value) throws IOException {
    return add(key, value, 0, value.length);
  }

  /** Append {@code key -> value[offset, offset + length)}; returns the pointer to store. */
  public BlobPointer add(byte[] key, byte[] value, int offset, int length) throws IOException {
    header.reset();
    header.putVarint(key.length).putVarint(length).put(key);
    recordCrc.reset();
    recordCrc.update(header.array(), 0, header.size());
    recordCrc.update(value, offset, length);
    out.write(header.array(), 0, header.size());
    long valueOffset = out.position();
    out.write(value, offset, length);
    Varints.writeFixed32(crcBytes, 0, (int) recordCrc.getValue());
    out.write(crcBytes, 0, 4);
    records++;
    valueBytes += length;
    return new BlobPointer(number, valueOffset, length, Checksums.crc32c(value, offset, length));
  }

  public long records() {
    return records;
  }

  public long valueBytes() {
    return valueBytes;
  }

  /** Bytes written so far, including what is buffered. */
  public long size() {
    return out.position();
  }

  /** Write the footer, fsync and close. Returns the file's size. */
  public long finish() throws IOException {
    try {
      byte[] f = new byte[BlobFormat.FOOTER_SIZE];
      Varints.writeFixed64(f, 0, records);
      Varints.writeFixed64(f, 8, valueBytes);
      Varints.writeFixed32(f, 16, Checksums.crc32c(f, 0, 16));
      Varints.writeFixed64(f, 20, BlobFormat.MAGIC);
      out.write(f, 0, f.length);
      out.flush();
      channel.force(true);
      channel.close();
      out.release();
      return out.position();
    } catch (IOException | RuntimeException e) {
      abandon();
      throw e;
    }
  }

  /** Close and delete the partial file. */
  public void abandon() {
    out.release();
    try {
      channel.close();
    } catch (IOException ignored) {
      // deleted next; never published
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // an unlisted blob file is removed at the next open
    }
  }
}
