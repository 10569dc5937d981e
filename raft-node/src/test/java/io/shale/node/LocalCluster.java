package io.shale.node;

import io.shale.engine.EngineOptions;
import io.shale.node.server.ShaleNode;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;

/** Nodes of one group on loopback ports, in this JVM, each with its directory under {@code dir}. */
final class LocalCluster implements AutoCloseable {
  final Map<String, ShaleNode> nodes = new LinkedHashMap<>();
  final RaftGroup group;
  final RaftProperties properties = ShaleNode.properties(Duration.ofMillis(300));
  private final Path dir;
  private final boolean api;
  private final EngineOptions engineOptions;

  LocalCluster(Path dir, int size, boolean api) throws IOException {
    this(dir, size, api, EngineOptions.defaults());
  }

  LocalCluster(Path dir, int size, boolean api, EngineOptions engineOptions) throws IOException {
    this.dir = dir;
    this.api = api;
    this.engineOptions = engineOptions;
    Map<String, String> peers = new LinkedHashMap<>();
    for (int i = 1; i <= size; i++) {
      peers.put("n" + i, "127.0.0.1:" + freePort());
    }
    group = ShaleNode.group("test-cluster", peers);
    for (String id : peers.keySet()) {
      start(id);
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  ShaleNode start(String id) throws IOException {
    ShaleNode n = ShaleNode.start(id, group, dir.resolve(id), engineOptions, properties);
    if (api) {
      n.serveApi(0, group, properties);
    }
    nodes.put(id, n);
    return n;
  }

  void stop(String id) throws IOException {
    nodes.remove(id).close();
  }

  RaftClient client() {
    return RaftClient.newBuilder().setProperties(properties).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(200,
            TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
  }

  /** The id of a node that is leader and ready, waiting up to 20 s for one. */
  String leader() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      for (Map.Entry<String, ShaleNode> n : nodes.entrySet()) {
        RaftServer.Division d;
        try {
          d = n.getValue().server().getDivision(group.getGroupId());
        } catch (IOException e) {
          continue;
        }
        if (d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
          return n.getKey();
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no leader within 20 s");
  }

  @Override
  public void close() throws IOException {
    for (ShaleNode n : nodes.values()) {
      n.close();
    }
    nodes.clear();
  }
}
