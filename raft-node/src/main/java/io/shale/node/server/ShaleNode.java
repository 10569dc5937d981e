package io.shale.node.server;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.pressure.WritePressure;
import io.shale.node.api.KvService;
import io.shale.node.pressure.PressurePoller;
import io.shale.node.pressure.ReplicaPressure;
import io.shale.node.statemachine.ShaleStateMachine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.TimeDuration;

/**
 * One Shale server: a Ratis {@link RaftServer} whose state machine is a
 * {@link ShaleStateMachine} over the engine in {@code dataDir/engine}; Ratis keeps its log and
 * metadata in {@code dataDir/raft} (the engine lives outside it: Ratis renames its state machine
 * directory away when it installs a snapshot).
 *
 * <p>Started with Ratis's FORMAT option on a new directory and RECOVER on an existing one (FORMAT
 * fails when the storage exists).
 */
public final class ShaleNode implements AutoCloseable {
  /**
   * The group every node of a cluster belongs to: its id is derived from the cluster name, so
   * nodes started from the same configuration agree without exchanging it.
   */
  public static RaftGroup group(String clusterName, Map<String, String> peers) {
    List<RaftPeer> list = new ArrayList<>();
    peers.forEach((id, address) -> list.add(RaftPeer.newBuilder().setId(id).setAddress(address)
        .build()));
    UUID uuid = UUID.nameUUIDFromBytes(clusterName.getBytes(StandardCharsets.UTF_8));
    return RaftGroup.valueOf(RaftGroupId.valueOf(uuid), list);
  }

  /**
   * Ratis settings every node of a cluster shares (client and servers): linearizable reads
   * through ReadIndex, and elections after {@code electionTimeoutMin} to twice that without a
   * leader.
   */
  public static RaftProperties properties(Duration electionTimeoutMin) {
    RaftProperties p = new RaftProperties();
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    long min = electionTimeoutMin.toMillis();
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(min, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * min, TimeUnit.MILLISECONDS));
    return p;
  }

  /** Values larger than this are refused (16 MiB, the default). */
  public static final int MAX_VALUE_BYTES = 16 << 20;

  private final RaftServer server;
  private final ShaleStateMachine stateMachine;
  /** Followers' pressure reports older than this are ignored (the default). */
  public static final Duration PRESSURE_REPORT_MAX_AGE = Duration.ofSeconds(2);
  static final Duration PRESSURE_POLL_INTERVAL = Duration.ofMillis(250);

  private PressurePoller poller;
  private RaftClient forwarder;
  private Server api;

  private ShaleNode(RaftServer server, ShaleStateMachine stateMachine) {
    this.server = server;
    this.stateMachine = stateMachine;
  }

  /**
   * Starts the public KV API on {@code port} (0: any free port). Writes and linearizable reads
   * it receives go to the leader through this node's own Ratis client.
   */
  public ShaleNode serveApi(int port, RaftGroup group, RaftProperties shared) throws IOException {
    forwarder = RaftClient.newBuilder().setProperties(shared).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(100,
            TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
        .build();
    RaftServer.Division division = server.getDivision(group.getGroupId());
    api = NettyServerBuilder.forPort(port)
        .addService(new KvService(division, stateMachine, forwarder, MAX_VALUE_BYTES))
        .maxInboundMessageSize(MAX_VALUE_BYTES + (1 << 20))
        .build()
        .start();
    return this;
  }

  /** The port the KV API listens on. */
  public int apiPort() {
    return api.getPort();
  }

  /**
   * Starts node {@code id} of {@code group}, listening for Raft on its address's port, with its
   * data in {@code dataDir}.
   */
  public static ShaleNode start(String id, RaftGroup group, Path dataDir, EngineOptions engine,
      RaftProperties shared) throws IOException {
    RaftPeerId peerId = RaftPeerId.valueOf(id);
    RaftPeer self = group.getPeer(peerId);
    if (self == null) {
      throw new IllegalArgumentException("node " + id + " is not a member of " + group);
    }
    RaftProperties p = new RaftProperties(shared);
    Path raftDir = dataDir.resolve("raft");
    boolean existing = Files.isDirectory(raftDir) && hasContent(raftDir);
    Files.createDirectories(raftDir);
    RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
    String address = self.getAddress();
    GrpcConfigKeys.Server.setPort(p, Integer.parseInt(address.substring(address.lastIndexOf(':') + 1)));
    ShaleStateMachine sm = new ShaleStateMachine(dataDir.resolve("engine"), engine);
    RaftServer server = RaftServer.newBuilder()
        .setServerId(peerId)
        .setGroup(group)
        .setProperties(p)
        .setStateMachine(sm)
        .setOption(existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
        .build();
    server.start();
    ShaleNode node = new ShaleNode(server, sm);
    ReplicaPressure replicas = new ReplicaPressure(id, () -> {
      Engine e = sm.engine();
      return e == null ? WritePressure.NONE : e.writePressure();
    }, PRESSURE_REPORT_MAX_AGE);
    sm.gateWritesOn(replicas);
    node.poller = new PressurePoller(id, group, shared, replicas, PRESSURE_POLL_INTERVAL);
    return node;
  }

  private static boolean hasContent(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.findAny().isPresent();
    }
  }

  public RaftServer server() {
    return server;
  }

  public ShaleStateMachine stateMachine() {
    return stateMachine;
  }

  @Override
  public void close() throws IOException {
    if (api != null) {
      api.shutdownNow();
      try {
        api.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (forwarder != null) {
      forwarder.close();
    }
    if (poller != null) {
      poller.close();
    }
    server.close();
  }
}
