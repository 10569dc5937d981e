package io.shale.engine.io;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * An append-only log of checksummed records, the container format of the manifest.
 *
 * <pre>
 * file   := header record*
 * header := magic u64 | format version u32 | crc32c(magic, version) u32        (16 bytes)
 * record := length u32 | ~length u32 | crc32c(payload) u32 | payload[length]
 * </pre>
 *
 * The complemented length tells a torn tail (a crash in the middle of an append: the record runs
 * past the end of the file) from a flipped length byte (length and ~length disagree), so that
 * corruption is never mistaken for an unfinished write. Each append is one write followed by an
 * fsync; a torn tail is only ever the last, unacknowledged record.
 */
public final class RecordLog {
  public static final int HEADER_SIZE = 16;
  private static final int RECORD_HEADER = 12;

  private RecordLog() {}

  /**
   * What reading a log found: the records, the file offset of each, and where a torn tail starts
   * ({@code tornTailAt}, -1 when the log ends cleanly).
   */
  public record Contents(List<byte[]> records, List<Long> offsets, long tornTailAt) {}

  public static final class Writer implements Closeable {
    private final FileChannel ch;
    private final Path file;
    private boolean broken;

    private Writer(FileChannel ch, Path file) {
      this.ch = ch;
      this.file = file;
    }

    /** Create a new log (failing if it exists) and make its header durable. */
    public static Writer create(Path file, long magic, int version) throws IOException {
      FileChannel ch =
          FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      try {
        byte[] h = new byte[HEADER_SIZE];
        Varints.writeFixed64(h, 0, magic);
        Varints.writeFixed32(h, 8, version);
        Varints.writeFixed32(h, 12, Checksums.crc32c(h, 0, 12));
        DurableFiles.writeFully(ch, ByteBuffer.wrap(h));
        ch.force(true);
        DurableFiles.syncDirectory(file.getParent());
        return new Writer(ch, file);
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
    }

    /**
     * Append one record and fsync; when this returns the record survives a crash. If it fails, the
     * partial record is cut off (best effort) and the writer refuses every later append: a record
     * appended after a partial one would sit behind bytes a reader takes for corruption.
     */
    public void append(byte[] payload) throws IOException {
      if (broken) {
        throw new IOException("record log " + file + " refuses appends after a failed one");
      }
      byte[] rec = new byte[RECORD_HEADER + payload.length];
      Varints.writeFixed32(rec, 0, payload.length);
      Varints.writeFixed32(rec, 4, ~payload.length);
      Varints.writeFixed32(rec, 8, Checksums.crc32c(payload, 0, payload.length));
      System.arraycopy(payload, 0, rec, RECORD_HEADER, payload.length);
      long start = ch.position();
      try {
        DurableFiles.writeFully(ch, ByteBuffer.wrap(rec));
        ch.force(false);
      } catch (IOException | RuntimeException e) {
        broken = true;
        try {
          ch.truncate(start);
          ch.force(false);
        } catch (IOException | RuntimeException cut) {
          e.addSuppressed(cut);
        }
        throw e;
      }
    }

    public Path file() {
      return file;
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  /** Read every complete record; corruption anywhere is a {@link CorruptionException}. */
  public static Contents read(Path file, long magic, int version) throws IOException {
    byte[] all = Files.readAllBytes(file);
    if (all.length < HEADER_SIZE) {
      throw new CorruptionException(file, 0, "log header truncated (" + all.length + " bytes)");
    }
    if (Checksums.crc32c(all, 0, 12) != Varints.readFixed32(all, 12)) {
      throw new CorruptionException(file, 0, "log header checksum mismatch");
    }
    if (Varints.readFixed64(all, 0) != magic) {
      throw new CorruptionException(file, 0, "bad magic number");
    }
    int v = Varints.readFixed32(all, 8);
    if (v != version) {
      throw new CorruptionException(
          file, 8, "unsupported format version " + v + " (expected " + version + ")");
    }
    List<byte[]> records = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    int pos = HEADER_SIZE;
    while (pos < all.length) {
      if (allZero(all, pos)) {
        // A crash can leave a file extended with zeros past its last complete record.
        return new Contents(records, offsets, pos);
      }
      if (all.length - pos < RECORD_HEADER) {
        return new Contents(records, offsets, pos);
      }
      int len = Varints.readFixed32(all, pos);
      int check = Varints.readFixed32(all, pos + 4);
      if (len != ~check || len < 0) {
        throw new CorruptionException(file, pos, "record length field damaged");
      }
      if ((long) pos + RECORD_HEADER + len > all.length) {
        return new Contents(records, offsets, pos);
      }
      int crc = Varints.readFixed32(all, pos + 8);
      if (Checksums.crc32c(all, pos + RECORD_HEADER, len) != crc) {
        throw new CorruptionException(file, pos, "record checksum mismatch");
      }
      byte[] payload = new byte[len];
      System.arraycopy(all, pos + RECORD_HEADER, payload, 0, len);
      records.add(payload);
      offsets.add((long) pos);
      pos += RECORD_HEADER + len;
    }
    return new Contents(records, offsets, -1);
  }

  private static boolean allZero(byte[] b, int from) {
    for (int i = from; i < b.length; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return true;
  }
}
