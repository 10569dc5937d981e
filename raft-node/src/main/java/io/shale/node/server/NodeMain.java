package io.shale.node.server;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one node until SIGTERM or SIGINT, then shuts it down gracefully (stops taking requests, lets
 * in-flight ones finish for up to 5 s, closes Raft and flushes nothing it does not need to: the
 * Raft log already holds every acknowledged write).
 *
 * <pre>
 *   NodeMain --config FILE [--join] [--set section.key=value ...]
 * </pre>
 *
 * {@code --join} starts a node that is not yet a member and waits to be added. Prints {@code ready
 * <id> api <port> http <port>} once up, for scripts and tests to wait on. Exit code 2 for bad
 * arguments or configuration (the message names the key), 1 if the node fails to start.
 */
public final class NodeMain {
  private static final Logger LOG = LoggerFactory.getLogger(NodeMain.class);

  private NodeMain() {}

  public static void main(String[] args) throws Exception {
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
    ShaleNode node;
    try {
      node = ShaleNode.start(c, join);
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
    System.out.println("ready " + c.id() + " api " + node.apiPort() + " http " + node.httpPort());
    System.out.flush();
    stopped.await();
  }

  private static void usage(String problem) {
    if (problem != null) {
      LOG.error(problem);
    }
    System.out.println("usage: shale-node --config FILE [--join] [--set section.key=value ...]");
    System.exit(problem == null ? 0 : 2);
  }
}
