package io.shale.ops.seed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A memory-limited Linux control group for one benchmark child: the child's heap, native memory and
 * the page cache of the files it reads and writes all count against the limit (cgroup v1's {@code
 * memory.limit_in_bytes} and v2's {@code memory.max} both charge page cache), which is what "the
 * data set is 3x larger than the memory the process may use" needs. Creating one needs root (or a
 * delegated subtree); {@link #create} says why when it cannot.
 */
final class MemoryCgroup implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MemoryCgroup.class);

  private static final Path V1 = Paths.get("/sys/fs/cgroup/memory");
  private static final Path V2 = Paths.get("/sys/fs/cgroup");

  private final Path dir;
  private final boolean v2;

  private MemoryCgroup(Path dir, boolean v2) {
    this.dir = dir;
    this.v2 = v2;
  }

  /** A new group limited to {@code limitBytes}, or the reason none could be made. */
  static Result create(String name, long limitBytes) {
    try {
      if (Files.isRegularFile(V1.resolve("memory.limit_in_bytes"))) {
        Path d = V1.resolve(name);
        Files.createDirectories(d);
        Files.writeString(d.resolve("memory.limit_in_bytes"), Long.toString(limitBytes));
        tryWrite(
            d.resolve("memory.memsw.limit_in_bytes"), Long.toString(limitBytes)); // no swap out
        return new Result(Optional.of(new MemoryCgroup(d, false)), "cgroup v1 " + d);
      }
      if (Files.isRegularFile(V2.resolve("cgroup.controllers"))
          && Files.readString(V2.resolve("cgroup.controllers")).contains("memory")) {
        tryWrite(V2.resolve("cgroup.subtree_control"), "+memory");
        Path d = V2.resolve(name);
        Files.createDirectories(d);
        Files.writeString(d.resolve("memory.max"), Long.toString(limitBytes));
        tryWrite(d.resolve("memory.swap.max"), "0");
        return new Result(Optional.of(new MemoryCgroup(d, true)), "cgroup v2 " + d);
      }
      return new Result(Optional.empty(), "no cgroup memory controller is mounted");
    } catch (IOException | RuntimeException e) {
      return new Result(
          Optional.empty(),
          "cannot create a memory cgroup ("
              + e
              + "); run as root, or start the benchmark in a container with --memory");
    }
  }

  /** The group, or why there is none. */
  record Result(Optional<MemoryCgroup> group, String description) {}

  private static void tryWrite(Path p, String value) {
    try {
      Files.writeString(p, value);
    } catch (IOException e) {
      // optional knob (swap accounting off, or controller already enabled)
    }
  }

  /** {@code command}, started inside this group: a shell moves itself in, then execs it. */
  List<String> wrap(List<String> command) {
    List<String> c =
        new ArrayList<>(
            List.of(
                "sh",
                "-c",
                "echo $$ > \"$0\" && exec \"$@\"",
                dir.resolve("cgroup.procs").toString()));
    c.addAll(command);
    return c;
  }

  /** The most memory the group has used, page cache included. */
  long peakBytes() {
    try {
      Path p = dir.resolve(v2 ? "memory.peak" : "memory.max_usage_in_bytes");
      return Long.parseLong(Files.readString(p).trim());
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** True if the kernel killed a process of the group for memory. */
  boolean oomKilled() {
    try {
      String events = Files.readString(dir.resolve(v2 ? "memory.events" : "memory.oom_control"));
      for (String line : events.split("\n")) {
        if (line.startsWith("oom_kill ") && Long.parseLong(line.substring(9).trim()) > 0) {
          return true;
        }
      }
    } catch (IOException | RuntimeException e) {
      // unknown
    }
    return false;
  }

  @Override
  public void close() {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LOG.error("seed-bench: could not remove " + dir + ": " + e);
    }
  }
}
