package io.shale.node.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes an {@link OutOfMemoryError} end the node process. A node that lost one thread to it (its
 * applier, a flush, a gRPC executor) would otherwise stay up but wedged, holding its place in the
 * cluster; ended, a supervisor restarts it on its data, which the Raft log and the engine keep
 * whole. The start scripts, the image and the test clusters run the JVM with {@code
 * -XX:+ExitOnOutOfMemoryError}, which covers errors caught on the way; where it is missing, every
 * uncaught one halts the process here, and the node says at start that the flag is missing.
 */
final class FatalErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);

  /** The exit status of a node halted by an uncaught OutOfMemoryError (as the JVM's flag uses). */
  static final int EXIT_OUT_OF_MEMORY = 3;

  private FatalErrors() {}

  static void install() {
    if (!exitsOnOutOfMemory()) {
      LOG.warn(
          "the JVM runs without -XX:+ExitOnOutOfMemoryError: an OutOfMemoryError caught by a"
              + " library would leave this node up but wedged; the start scripts set it");
    }
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler(
        (thread, e) -> {
          if (e instanceof OutOfMemoryError) {
            // No logging framework call: it may need the memory that ran out.
            System.err.println("fatal: OutOfMemoryError in thread " + thread.getName());
            Runtime.getRuntime().halt(EXIT_OUT_OF_MEMORY);
          }
          if (previous != null) {
            previous.uncaughtException(thread, e);
          } else {
            LOG.error("uncaught exception in thread {}", thread.getName(), e);
          }
        });
  }

  /** Whether the JVM was started with {@code -XX:+ExitOnOutOfMemoryError} or the crashing one. */
  static boolean exitsOnOutOfMemory() {
    return JvmOptions.on("ExitOnOutOfMemoryError") || JvmOptions.on("CrashOnOutOfMemoryError");
  }
}
