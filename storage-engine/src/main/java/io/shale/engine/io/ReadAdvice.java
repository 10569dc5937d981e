package io.shale.engine.io;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens files for reading with {@code posix_fadvise(POSIX_FADV_RANDOM)} on their descriptor (as
 * RocksDB does for every table it opens), so that a read of one block is not stretched to the
 * device's read-ahead window. Without it a point read that lands next to pages the kernel read
 * ahead for a scan or a compaction starts another read-ahead of up to {@code read_ahead_kb} (8 MiB
 * on some disks), and on data larger than memory those reads evict what other reads need.
 *
 * <p>The advice belongs to one open file description, so it is given to the descriptor this class
 * opens, read from its {@link FileDescriptor}. That needs {@code --add-opens
 * java.base/java.io=ALL-UNNAMED} (every launcher here passes it) and Linux (JNA calls libc);
 * otherwise files open without advice and the log says why, once. Finding descriptors by listing
 * {@code /proc/self/fd} instead costs a system call per open descriptor on every open: with a
 * thousand tables open it put 2-5 ms into gets that opened a table (docs/benchmarks.md).
 */
public final class ReadAdvice {
  private static final Logger LOG = LoggerFactory.getLogger(ReadAdvice.class);
  private static final int POSIX_FADV_RANDOM = 1;
  private static final Path FDS = Path.of("/proc/self/fd");
  private static final boolean LIBC = loadLibc();
  private static final VarHandle FD = LIBC ? descriptorField() : null;
  private static final AtomicLong ADVISED = new AtomicLong();

  private ReadAdvice() {}

  /** libc, bound by JNA's direct mapping. */
  private static final class Libc {
    static native int posix_fadvise(int fd, long offset, long len, int advice);
  }

  private static boolean loadLibc() {
    if (!Platform.isLinux()) {
      LOG.info("read advice is Linux-only: files are read with the kernel's read-ahead");
      return false;
    }
    try {
      Native.register(Libc.class, Platform.C_LIBRARY_NAME);
      return true;
    } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError: no usable libc binding
      LOG.warn("posix_fadvise unavailable ({}): files are read with the kernel's read-ahead", t);
      return false;
    }
  }

  private static VarHandle descriptorField() {
    try {
      return MethodHandles.privateLookupIn(FileDescriptor.class, MethodHandles.lookup())
          .findVarHandle(FileDescriptor.class, "fd", int.class);
    } catch (IllegalAccessException | NoSuchFieldException | RuntimeException e) {
      LOG.warn(
          "read advice needs the JVM option --add-opens java.base/java.io=ALL-UNNAMED ({}):"
              + " files are read with the kernel's read-ahead",
          e.toString());
      return null;
    }
  }

  /** True if files opened here are advised. */
  public static boolean available() {
    return FD != null;
  }

  /** Files advised since the process started (for tests and diagnostics). */
  public static long advised() {
    return ADVISED.get();
  }

  /**
   * Opens {@code file} for reading; if {@code random} and advice is {@link #available}, its
   * descriptor is advised that reads are random. Closing the channel closes the file.
   */
  public static FileChannel open(Path file, boolean random) throws IOException {
    if (!random || FD == null) {
      return FileChannel.open(file, StandardOpenOption.READ);
    }
    @SuppressWarnings("resource") // closed through its channel
    RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r");
    FileChannel ch = raf.getChannel();
    try {
      int fd = (int) FD.get(raf.getFD());
      int err = Libc.posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
      if (err == 0) {
        ADVISED.incrementAndGet();
      } else {
        LOG.debug("posix_fadvise({}, RANDOM) on {} failed with errno {}", fd, file, err);
      }
      return ch;
    } catch (RuntimeException | Error e) {
      ch.close();
      throw e;
    }
  }

  /**
   * The descriptors this process has open on {@code file} (empty if they cannot be listed): a
   * diagnostic for tests of descriptor leaks, one system call per open descriptor.
   */
  public static List<Integer> descriptorsOf(Path file) {
    List<Integer> fds = new ArrayList<>();
    Path target;
    try {
      target = file.toRealPath();
    } catch (IOException e) {
      return fds;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(FDS)) {
      for (Path e : entries) {
        try {
          if (Files.readSymbolicLink(e).equals(target)) {
            fds.add(Integer.parseInt(e.getFileName().toString()));
          }
        } catch (IOException | NumberFormatException ignored) {
          // closed while listed, or not a descriptor
        }
      }
    } catch (IOException e) {
      LOG.debug("cannot list {}: {}", FDS, e.toString());
    }
    return fds;
  }
}
