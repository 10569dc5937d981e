package io.shale.node.server;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one node until SIGTERM or SIGINT, then shuts it down gracefully (stops taking requests, lets
 * in-flight ones finish for up to 5 s, closes Raft and flushes nothing it does not need to: the
 * Raft log already holds every acknowledged write).
 *
 * <pre>
 *   NodeMain --config FILE [--join] [--set section.key=value ...]
 *   NodeMain restore --backup DIR --cluster NEW_NAME (--config FILE | --data-dir DIR)
 * </pre>
 *
 * {@code --join} starts a node that is not yet a member and waits to be added. Prints {@code live
 * <id> api <port> http <port>} once it serves, and {@code ready <id> api <port> http <port>} once
 * it has caught up with the leader (what {@code /ready} says), for scripts and tests to wait on.
 * Exit code 2 for bad arguments or configuration (the message names the key), 1 if the node fails
 * to start.
 */
public final class NodeMain {
  private static final Logger LOG = LoggerFactory.getLogger(NodeMain.class);

  private NodeMain() {}

  public static void main(String[] args) throws Exception {
    long startedAt =
        System.nanoTime()
            - TimeUnit.MILLISECONDS.toNanos(ManagementFactory.getRuntimeMXBean().getUptime());
    if (args.length > 0 && args[0].equals("restore")) {
      System.exit(restore(args));
      return;
    }
    Path config = null;
    boolean join = false;
    List<String> overrides = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        // Relative to the caller's directory (the ops scripts run from the repository root).
        case "--config" ->
            config =
                i + 1 < args.length
                    ? Paths.get(System.getProperty("shale.ops.cwd", ".")).resolve(args[++i])
                    : null;
        case "--set" -> {
          if (i + 1 >= args.length) {
            usage("--set needs section.key=value");
          }
          overrides.add(args[++i]);
        }
        case "--join" -> join = true;
        case "--version" -> {
          System.out.println("shale-node " + ReleaseVersion.describe());
          return;
        }
        case "-h", "--help" -> {
          usage(null);
        }
        default -> usage("unknown argument '" + args[i] + "'");
      }
    }
    if (config == null) {
      usage("--config FILE is required");
    }
    NodeConfig c;
    try {
      c = NodeConfig.load(config, overrides);
    } catch (IllegalArgumentException e) {
      LOG.error("invalid configuration: {}", e.getMessage());
      System.exit(2);
      return;
    }
    String misfit = HeapBudget.of(c).misfit(Runtime.getRuntime().maxMemory());
    if (misfit != null) {
      LOG.error("{} does not start: {}", c.id(), misfit);
      System.exit(2);
      return;
    }
    LOG.info(
        "{}'s heap budget: {} MiB of {} MiB ({})",
        c.id(),
        HeapBudget.of(c).total() >> 20,
        Runtime.getRuntime().maxMemory() >> 20,
        HeapBudget.of(c).describe());
    String regions = HeapBudget.regionWarning();
    if (regions != null) {
      LOG.warn("{}: {}", c.id(), regions);
    }
    FatalErrors.install();
    ShaleNode node;
    try {
      node =
          ShaleNode.start(
              c,
              join,
              why -> {
                // Ratis closed the Raft division: nothing in this process brings it back. Exit
                // (the shutdown hook closes the node) so that a supervisor restarts it on its data.
                LOG.error("{}: {}; exiting with status {}", c.id(), why, EXIT_DIVISION_LOST);
                System.exit(EXIT_DIVISION_LOST);
              });
    } catch (Exception e) {
      LOG.error("node {} failed to start", c.id(), e);
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    // On stdout beside the "ready" line: scripts and tests follow a node's
                    // lifecycle there.
                    System.out.println(c.id() + " shutting down");
                    System.out.flush();
                    LOG.info("{} shutting down", c.id());
                    node.close();
                  } catch (Exception e) {
                    LOG.error("closing node {} failed", c.id(), e);
                  } finally {
                    stopped.countDown();
                  }
                },
                "shutdown"));
    String ports = c.id() + " api " + node.apiPort() + " http " + node.httpPort();
    System.out.println("live " + ports);
    System.out.flush();
    announceReady(node, ports, startedAt);
    stopped.await();
  }

  /**
   * Prints "ready ..." once the node has caught up ({@link ShaleNode#notReadyReason}, also its
   * {@code /ready}), and logs how long that took: "live" means it serves, "ready" that what it
   * serves is current. A joining node is ready once added and caught up.
   */
  private static void announceReady(ShaleNode node, String ports, long startedAt) {
    Thread watch =
        new Thread(
            () -> {
              String why = node.notReadyReason();
              long lastLog = System.nanoTime();
              try {
                while (why != null) {
                  if (System.nanoTime() - lastLog > TimeUnit.SECONDS.toNanos(10)) {
                    LOG.info("{} not ready yet: {}", node.config().id(), why);
                    lastLog = System.nanoTime();
                  }
                  Thread.sleep(READY_POLL_MILLIS);
                  why = node.notReadyReason();
                }
              } catch (InterruptedException stopping) {
                return;
              }
              LOG.info(
                  "{} ready: caught up {} ms after the process started",
                  node.config().id(),
                  TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt));
              System.out.println("ready " + ports);
              System.out.flush();
            },
            "ready-watch");
    watch.setDaemon(true);
    watch.start();
  }

  /** Exit status when Ratis closed the node's Raft division (see DivisionWatch). */
  static final int EXIT_DIVISION_LOST = 3;

  /** How often the node checks whether it has caught up before it says "ready". */
  private static final long READY_POLL_MILLIS = 50;

  /**
   * {@code shale-node restore --backup DIR --cluster NAME (--config FILE | --data-dir DIR)}: seeds
   * an empty data directory of a new cluster named NAME from a backup ({@link Restore}).
   */
  private static int restore(String[] args) {
    Path backup = null;
    Path dataDir = null;
    Path config = null;
    String cluster = null;
    Path cwd = Paths.get(System.getProperty("shale.ops.cwd", "."));
    for (int i = 1; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--backup" -> backup = cwd.resolve(args[i + 1]);
        case "--data-dir" -> dataDir = cwd.resolve(args[i + 1]);
        case "--config" -> config = cwd.resolve(args[i + 1]);
        case "--cluster" -> cluster = args[i + 1];
        default -> {
          LOG.error("unknown restore argument '{}'", args[i]);
          return 2;
        }
      }
    }
    if (args.length % 2 == 0
        || backup == null
        || cluster == null
        || (dataDir == null) == (config == null)) {
      System.out.println(
          "usage: shale-node restore --backup DIR --cluster NEW_NAME"
              + " (--config FILE | --data-dir DIR)");
      return 2;
    }
    try {
      if (config != null) {
        dataDir = NodeConfig.load(config, List.of()).dataDir();
      }
      var m = Restore.restore(backup, dataDir, cluster);
      System.out.printf(
          "restored backup of cluster %s (node %s, index %d, term %d, %d files, %d bytes) into %s"
              + " as cluster %s; start every node of the new cluster with node.cluster = \"%s\"%n",
          m.cluster(),
          m.node(),
          m.index(),
          m.term(),
          m.files().size(),
          m.bytes(),
          dataDir,
          cluster,
          cluster);
      return 0;
    } catch (IllegalArgumentException | java.io.IOException e) {
      LOG.error("restore failed: {}", e.getMessage());
      return 1;
    }
  }

  private static void usage(String problem) {
    if (problem != null) {
      LOG.error(problem);
    }
    System.out.println("usage: shale-node --config FILE [--join] [--set section.key=value ...]");
    System.exit(problem == null ? 0 : 2);
  }
}
