package io.shale.engine.blob;

import io.shale.engine.io.Checksums;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.io.ReadAdvice;
import io.shale.engine.io.Varints;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Reads values out of a finished blob file. Header and footer are verified at open; each value read
 * is verified against the checksum its pointer carries. Thread-safe (positional reads).
 */
public final class BlobFileReader implements AutoCloseable {
  private final Path file;
  private final long number;
  private final FileChannel channel;
  private final long size;
  private final long records;
  private final long valueBytes;

  private BlobFileReader(Path file, long number, FileChannel channel) throws IOException {
    this.file = file;
    this.number = number;
    this.channel = channel;
    this.size = channel.size();
    if (size < BlobFormat.HEADER_SIZE + BlobFormat.FOOTER_SIZE) {
      throw new CorruptionException(
          file, 0, "file of " + size + " bytes is too short for a blob file");
    }
    ByteBuffer h = ByteBuffer.allocate(BlobFormat.HEADER_SIZE);
    DurableFiles.readFully(channel, h, 0, file);
    byte[] hb = h.array();
    if (Checksums.crc32c(hb, 0, 12) != Varints.readFixed32(hb, 12)
        || Varints.readFixed64(hb, 0) != BlobFormat.MAGIC) {
      throw new CorruptionException(file, 0, "bad blob file header");
    }
    if (Varints.readFixed32(hb, 8) != BlobFormat.VERSION) {
      throw new CorruptionException(
          file, 8, "unsupported blob format version " + Varints.readFixed32(hb, 8));
    }
    long footerAt = size - BlobFormat.FOOTER_SIZE;
    ByteBuffer f = ByteBuffer.allocate(BlobFormat.FOOTER_SIZE);
    DurableFiles.readFully(channel, f, footerAt, file);
    byte[] fb = f.array();
    if (Varints.readFixed64(fb, 20) != BlobFormat.MAGIC
        || Checksums.crc32c(fb, 0, 16) != Varints.readFixed32(fb, 16)) {
      throw new CorruptionException(file, footerAt, "bad blob file footer");
    }
    this.records = Varints.readFixed64(fb, 0);
    this.valueBytes = Varints.readFixed64(fb, 8);
  }

  public static BlobFileReader open(Path file, long number) throws IOException {
    return open(file, number, false);
  }

  /** As {@link #open(Path, long)}; {@code adviseRandom}: see {@link ReadAdvice}. */
  public static BlobFileReader open(Path file, long number, boolean adviseRandom)
      throws IOException {
    FileChannel ch = ReadAdvice.open(file, adviseRandom);
    try {
      return new BlobFileReader(file, number, ch);
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  public long number() {
    return number;
  }

  public Path file() {
    return file;
  }

  public long records() {
    return records;
  }

  public long valueBytes() {
    return valueBytes;
  }

  /** End of the record area (where the footer starts). */
  public long dataEnd() {
    return size - BlobFormat.FOOTER_SIZE;
  }

  /** Read the value {@code p} points at, verified against the pointer's checksum. */
  public byte[] read(BlobPointer p) throws IOException {
    checkBounds(p);
    byte[] v = new byte[p.length()];
    DurableFiles.readFully(channel, ByteBuffer.wrap(v), p.offset(), file);
    verify(p, v, 0);
    return v;
  }

  /**
   * Read at least {@code needed}, at most {@code into.remaining()} raw bytes of the record area at
   * {@code offset} into {@code into} (read-ahead for scans); returns how many.
   */
  int readSome(long offset, ByteBuffer into, int needed) throws IOException {
    if (offset + needed > dataEnd()) {
      throw new CorruptionException(file, offset, needed + " bytes reach outside the record area");
    }
    int n = (int) Math.min(into.remaining(), dataEnd() - offset);
    into.limit(into.position() + n);
    DurableFiles.readFully(channel, into, offset, file);
    return n;
  }

  void checkBounds(BlobPointer p) {
    if (p.offset() < BlobFormat.HEADER_SIZE || p.offset() + p.length() > dataEnd()) {
      throw new CorruptionException(
          file,
          p.offset(),
          "blob pointer of " + p.length() + " bytes reaches outside the record area");
    }
  }

  /** Check that {@code buf[at, at+length)} is the value {@code p} points at. */
  void verify(BlobPointer p, byte[] buf, int at) {
    if (Checksums.crc32c(buf, at, p.length()) != p.crc()) {
      throw new CorruptionException(
          file, p.offset(), "blob value checksum mismatch (" + p.length() + " bytes)");
    }
  }

  /** A record as stored: its key, and where its value is. */
  public record Record(byte[] key, BlobPointer pointer) {}

  /** Visit every record, checking each record checksum. For the verifier and tests. */
  public void forEachRecord(java.util.function.Consumer<Record> visitor) throws IOException {
    long end = dataEnd();
    java.io.InputStream in =
        new java.io.BufferedInputStream(
            java.nio.channels.Channels.newInputStream(channel.position(BlobFormat.HEADER_SIZE)),
            1 << 20);
    long pos = BlobFormat.HEADER_SIZE;
    long seen = 0;
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    while (pos < end) {
      crc.reset();
      long[] header = new long[2];
      int headerLen = 0;
      for (int i = 0; i < 2; i++) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
          int b = in.read();
          headerLen++;
          if (b < 0 || shift > 28) {
            throw new CorruptionException(file, pos, "undecodable blob record header");
          }
          crc.update(b);
          v |= (long) (b & 0x7f) << shift;
          if ((b & 0x80) == 0) {
            break;
          }
        }
        header[i] = v;
      }
      long recordLen = headerLen + header[0] + header[1] + 4;
      if (header[0] > Integer.MAX_VALUE || header[1] > Integer.MAX_VALUE || pos + recordLen > end) {
        throw new CorruptionException(file, pos, "blob record overruns the file");
      }
      byte[] key = in.readNBytes((int) header[0]);
      byte[] value = in.readNBytes((int) header[1]);
      byte[] stored = in.readNBytes(4);
      if (stored.length < 4) {
        throw new CorruptionException(file, pos, "blob record truncated");
      }
      crc.update(key);
      crc.update(value);
      if ((int) crc.getValue() != Varints.readFixed32(stored, 0)) {
        throw new CorruptionException(file, pos, "blob record checksum mismatch");
      }
      visitor.accept(
          new Record(
              key,
              new BlobPointer(
                  number,
                  pos + headerLen + header[0],
                  (int) header[1],
                  Checksums.crc32c(value, 0, value.length))));
      pos += recordLen;
      seen++;
    }
    if (seen != records) {
      throw new CorruptionException(
          file, end, "footer counts " + records + " records, found " + seen);
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
