package io.shale.node.server;

import io.shale.engine.EngineOptions;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;

/**
 * Runs one node until SIGTERM (a TOML configuration file comes with the rest of issue 5):
 *
 * <pre>
 *   NodeMain ID DATA_DIR API_PORT PEER=HOST:PORT [PEER=HOST:PORT ...]
 * </pre>
 *
 * The cluster name (from which the Raft group id is derived) is {@code -Dshale.cluster}, "shale" by
 * default. Prints {@code ready <id> api <port>} once the node is up, for scripts and tests to wait
 * on.
 */
public final class NodeMain {
  private NodeMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: NodeMain ID DATA_DIR API_PORT PEER=HOST:PORT [PEER=HOST:PORT ...]");
      System.exit(2);
    }
    String id = args[0];
    Path dataDir = Paths.get(args[1]);
    int apiPort;
    try {
      apiPort = Integer.parseInt(args[2]);
    } catch (NumberFormatException e) {
      System.err.println("API_PORT must be a number, got '" + args[2] + "'");
      System.exit(2);
      return;
    }
    Map<String, String> peers = new LinkedHashMap<>();
    for (int i = 3; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        System.err.println("a peer is ID=HOST:PORT, got '" + args[i] + "'");
        System.exit(2);
      }
      peers.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    RaftGroup group = ShaleNode.group(System.getProperty("shale.cluster", "shale"), peers);
    RaftProperties properties = ShaleNode.properties(Duration.ofMillis(300));
    ShaleNode node = ShaleNode.start(id, group, dataDir, EngineOptions.defaults(), properties)
        .serveApi(apiPort, group, properties);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.close();
      } catch (Exception e) {
        System.err.println("closing node " + id + ": " + e);
      } finally {
        stopped.countDown();
      }
    }, "shutdown"));
    System.out.println("ready " + id + " api " + node.apiPort());
    System.out.flush();
    stopped.await();
  }
}
