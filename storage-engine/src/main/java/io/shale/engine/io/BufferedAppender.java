package io.shale.engine.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.function.LongConsumer;

/**
 * Appends to a new file through a fixed buffer, so that writers of tables and blob files issue a
 * few large writes instead of one per entry. Tells {@code onWrite} the size of every write it
 * issues (the background I/O budget meters them). Not thread-safe; durability (fsync) stays with
 * the caller.
 */
public final class BufferedAppender {
  private final FileChannel channel;
  private final ByteBuffer buffer;
  private final LongConsumer onWrite;
  private long written;

  public BufferedAppender(FileChannel channel, int bufferSize, LongConsumer onWrite) {
    this.channel = channel;
    this.buffer = ByteBuffer.allocate(bufferSize);
    this.onWrite = onWrite;
  }

  public void write(byte[] b, int off, int len) throws IOException {
    while (len > 0) {
      int n = Math.min(len, buffer.remaining());
      buffer.put(b, off, n);
      off += n;
      len -= n;
      if (!buffer.hasRemaining()) {
        flush();
      }
    }
  }

  /** Bytes appended so far, written or buffered: the file offset of the next byte. */
  public long position() {
    return written + buffer.position();
  }

  /** Write out what is buffered (not an fsync). */
  public void flush() throws IOException {
    buffer.flip();
    int n = buffer.remaining();
    written += n;
    DurableFiles.writeFully(channel, buffer);
    buffer.clear();
    if (n > 0) {
      onWrite.accept(n);
    }
  }
}
