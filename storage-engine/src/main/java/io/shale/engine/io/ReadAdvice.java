package io.shale.engine.io;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the kernel that a file is read at random ({@code posix_fadvise(POSIX_FADV_RANDOM)}, as
 * RocksDB does for every table it opens), so that a read of one block is not stretched to the
 * device's read-ahead window. Without it a point read that lands next to pages the kernel read
 * ahead for a scan or a compaction starts another read-ahead of up to {@code read_ahead_kb} (8 MiB
 * on some disks), and on data larger than memory those reads evict what other reads need.
 *
 * <p>The advice belongs to each open file description, and Java does not expose descriptors, so the
 * descriptors open on a file are found in {@code /proc/self/fd}. Linux only (JNA calls libc);
 * elsewhere, or if libc cannot be loaded, every call does nothing and says so once in the log.
 * Advising a descriptor of the same file that another reader opened is harmless: the advice only
 * changes read-ahead.
 */
public final class ReadAdvice {
  private static final Logger LOG = LoggerFactory.getLogger(ReadAdvice.class);
  private static final int POSIX_FADV_RANDOM = 1;
  private static final Path FDS = Path.of("/proc/self/fd");
  private static final boolean AVAILABLE = load();

  private ReadAdvice() {}

  /** libc, bound by JNA's direct mapping. */
  private static final class Libc {
    static native int posix_fadvise(int fd, long offset, long len, int advice);
  }

  private static boolean load() {
    if (!Platform.isLinux() || !Files.isDirectory(FDS)) {
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

  /** True if advice can be given on this platform. */
  public static boolean available() {
    return AVAILABLE;
  }

  /**
   * Advise random reads on every descriptor this process has open on {@code file}; returns how many
   * were advised (0 if advice is unavailable). Call after opening the file.
   */
  public static int adviseRandom(Path file) {
    if (!AVAILABLE) {
      return 0;
    }
    int advised = 0;
    for (int fd : descriptorsOf(file)) {
      int err = Libc.posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
      if (err == 0) {
        advised++;
      } else {
        LOG.debug("posix_fadvise({}, RANDOM) on {} failed with errno {}", fd, file, err);
      }
    }
    return advised;
  }

  /** The descriptors this process has open on {@code file} (empty if they cannot be listed). */
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
