package io.shale.engine.io;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Memory-mapped, read-only views of immutable files, and their explicit release.
 *
 * <p>Why map: a point read then costs a copy out of the page cache instead of a system call, and
 * needs no on-heap block cache whose churn the garbage collector would pay for. Why release
 * explicitly: a mapping otherwise lives until the collector finds its buffer, keeping a deleted
 * file's disk space; Java 17 offers no public unmap, so the JDK's {@code Unsafe.invokeCleaner}
 * (module {@code jdk.unsupported}) is used when present. Precondition of {@link #unmap}: no thread
 * reads the buffer afterwards (the table's reference count guarantees it); reading an unmapped
 * buffer crashes the JVM.
 */
public final class MappedFiles {
  /** Files larger than this are read with positional reads instead (one mapping is <= 2 GiB). */
  public static final long MAX_MAPPED_BYTES = 1L << 30;

  private static final Method INVOKE_CLEANER;
  private static final Object UNSAFE;

  static {
    Method m = null;
    Object u = null;
    try {
      Class<?> c = Class.forName("sun.misc.Unsafe");
      Field f = c.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      u = f.get(null);
      m = c.getMethod("invokeCleaner", ByteBuffer.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      m = null;
      u = null;
    }
    INVOKE_CLEANER = m;
    UNSAFE = u;
  }

  private MappedFiles() {}

  /** True if mappings can be released explicitly; without it the engine does not map. */
  public static boolean canUnmap() {
    return INVOKE_CLEANER != null;
  }

  public static MappedByteBuffer map(FileChannel channel, long size) throws IOException {
    return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
  }

  public static void unmap(MappedByteBuffer buffer) {
    if (INVOKE_CLEANER == null || buffer == null) {
      return;
    }
    try {
      INVOKE_CLEANER.invoke(UNSAFE, buffer);
    } catch (ReflectiveOperationException e) {
      // left to the garbage collector
    }
  }
}
