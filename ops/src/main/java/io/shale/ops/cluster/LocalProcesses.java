package io.shale.ops.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Child processes of a benchmark with their output in log files; all are killed on close (and when
 * this JVM exits).
 */
final class LocalProcesses implements AutoCloseable {
  private final List<Process> processes = new ArrayList<>();

  LocalProcesses() {
    Runtime.getRuntime().addShutdownHook(new Thread(this::close));
  }

  /** Starts {@code command} with its output in {@code log}. */
  Process start(List<String> command, Path log) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      synchronized (processes) {
        processes.add(p);
      }
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException("starting " + command.get(0), e);
    }
  }

  /** Waits until a line of {@code log} matches, failing with the log's tail if the process ends. */
  static void awaitLine(Process p, Path log, Predicate<String> line, int seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      try (BufferedReader r =
          new BufferedReader(
              new InputStreamReader(Files.newInputStream(log), StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          if (line.test(l)) {
            return;
          }
        }
      } catch (IOException e) {
        // not created yet
      }
      if (!p.isAlive()) {
        throw new IllegalStateException("process exited with " + p.exitValue() + "; see " + log);
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("no ready line within " + seconds + " s; see " + log);
  }

  static int freePort() {
    try {
      return io.shale.node.local.LocalCluster.freePort(); // below the ephemeral range
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    synchronized (processes) {
      // A polite stop first, so a JVM runs its shutdown (and writes what it writes at exit).
      for (Process p : processes) {
        p.destroy();
      }
      for (Process p : processes) {
        try {
          if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          p.destroyForcibly();
        }
      }
      processes.clear();
    }
  }
}
