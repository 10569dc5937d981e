package io.shale.engine.io;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers that a thread reuses: read-ahead windows (a compaction input's, a scan's) and the
 * write buffers of table and blob file writers. On the heap these buffers lived long enough to be
 * promoted (a compaction's windows for the whole job, a scan's pooled windows for good), and they
 * were most of the old generation's data and garbage; off the heap they cost the collector nothing,
 * and file reads and writes skip the JDK's copy through a temporary direct buffer
 * (docs/benchmarks.md, "Cause, change, effect under write bursts").
 *
 * <p>A thread keeps at most {@code keepBytes}, oldest given back dropped first (a dropped buffer's
 * memory returns when the collector finds it). A request gets the smallest kept buffer at least as
 * large, cleared and limited to the request. Each thread has its own pool, so no locking; a buffer
 * given back on another thread than the one it came from just joins that thread's pool. If direct
 * memory runs out, a heap buffer stands in.
 */
public final class DirectBuffers {
  /** Write buffers of table and blob file writers: a few per thread (a flush writes both). */
  public static final DirectBuffers WRITE_BUFFERS = new DirectBuffers(1 << 20);

  private final int keepBytes;
  private final ThreadLocal<Pool> pools = ThreadLocal.withInitial(Pool::new);

  private static final class Pool {
    final ArrayDeque<ByteBuffer> buffers = new ArrayDeque<>();
    long bytes;
  }

  /**
   * @param keepBytes the most a thread keeps for reuse
   */
  public DirectBuffers(int keepBytes) {
    this.keepBytes = keepBytes;
  }

  /**
   * A buffer of at least {@code bytes}, position 0 and limit {@code bytes}: the smallest such one
   * the thread keeps, else a new one of exactly {@code bytes}.
   */
  public ByteBuffer take(int bytes) {
    Pool p = pools.get();
    ByteBuffer best = null;
    for (ByteBuffer b : p.buffers) {
      if (b.capacity() >= bytes && (best == null || b.capacity() < best.capacity())) {
        best = b;
      }
    }
    if (best == null) {
      try {
        return ByteBuffer.allocateDirect(bytes);
      } catch (OutOfMemoryError e) {
        return ByteBuffer.allocate(bytes); // direct memory is exhausted (-XX:MaxDirectMemorySize)
      }
    }
    // By identity: ByteBuffer.equals compares contents, so removeFirstOccurrence could drop
    // another buffer and leave this one to be handed out twice.
    for (java.util.Iterator<ByteBuffer> it = p.buffers.iterator(); it.hasNext(); ) {
      if (it.next() == best) {
        it.remove();
        break;
      }
    }
    p.bytes -= best.capacity();
    return best.clear().limit(bytes);
  }

  /**
   * Keep {@code buffer} for the thread's next use. Precondition: its taker uses it no more, and
   * gives it back once.
   */
  public void give(ByteBuffer buffer) {
    if (buffer.capacity() > keepBytes || !buffer.isDirect()) {
      return;
    }
    Pool p = pools.get();
    p.buffers.addLast(buffer);
    p.bytes += buffer.capacity();
    while (p.bytes > keepBytes) {
      p.bytes -= p.buffers.pollFirst().capacity();
    }
  }

  /** Bytes the calling thread keeps (tests). */
  long keptBytes() {
    return pools.get().bytes;
  }
}
