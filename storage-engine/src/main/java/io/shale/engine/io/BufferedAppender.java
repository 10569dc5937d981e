package io.shale.engine.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.function.LongConsumer;

/**
 * Appends to a new file through a fixed buffer, so that writers of tables and blob files issue a
 * few large writes instead of one per entry. Tells {@code onWrite} the size of every write it
 * issues (the background I/O budget meters them). The buffer comes from {@link
 * DirectBuffers#WRITE_BUFFERS} and goes back on {@link #release}. Not thread-safe; durability
 * (fsync) stays with the caller.
 */
public final class BufferedAppender {
  private final FileChannel channel;
  private ByteBuffer buffer;
  private final LongConsumer onWrite;
  private long written;

  public BufferedAppender(FileChannel channel, int bufferSize, LongConsumer onWrite) {
    this.channel = channel;
    this.buffer = DirectBuffers.WRITE_BUFFERS.take(bufferSize);
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
    return written + (buffer == null ? 0 : buffer.position());
  }

  /**
   * Give the buffer back, dropping anything not yet written: after the last {@link #flush}, or when
   * the file is abandoned. Idempotent; nothing may be written after it.
   */
  public void release() {
    if (buffer != null) {
      ByteBuffer b = buffer;
      buffer = null;
      DirectBuffers.WRITE_BUFFERS.give(b);
    }
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
