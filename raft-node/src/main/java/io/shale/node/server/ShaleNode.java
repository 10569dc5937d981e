package io.shale.node.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.StatusException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.shale.engine.Engine;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.engine.pressure.WritePressure;
import io.shale.node.api.AuthService;
import io.shale.node.api.BackupService;
import io.shale.node.api.CallRunner;
import io.shale.node.api.ClusterService;
import io.shale.node.api.GroupCommit;
import io.shale.node.api.KvService;
import io.shale.node.api.LeaseService;
import io.shale.node.api.RequestLimits;
import io.shale.node.audit.AuditLog;
import io.shale.node.audit.AuditTrail;
import io.shale.node.auth.ApiGuard;
import io.shale.node.lease.LeaseExpiry;
import io.shale.node.metrics.GrpcMeters;
import io.shale.node.metrics.RaftMeters;
import io.shale.node.metrics.RatisMetricsBridge;
import io.shale.node.pressure.PressurePoller;
import io.shale.node.pressure.ReplicaPressure;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.ratis.DivisionWatch;
import io.shale.node.ratis.ForwardingClient;
import io.shale.node.ratis.LeftoverSenders;
import io.shale.node.ratis.PromptCommitRpc;
import io.shale.node.ratis.RaftRecipientCheck;
import io.shale.node.snapshot.LogSizeSnapshots;
import io.shale.node.snapshot.SnapshotTransferService;
import io.shale.node.statemachine.ShaleStateMachine;
import io.shale.node.transport.PeerChannels;
import io.shale.node.transport.PeerServices;
import io.shale.node.transport.PeerTls;
import io.shale.node.transport.RaftPortLimits;
import io.shale.node.transport.RaftTransport;
import io.shale.node.watch.WatchService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.retry.ExceptionDependentRetry;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Shale server, started from a {@link NodeConfig}: a Ratis {@link RaftServer} whose state
 * machine is a {@link ShaleStateMachine} over the engine in {@code dataDir/engine} (Ratis keeps its
 * log and metadata in {@code dataDir/raft}; the engine lives outside it, because Ratis renames its
 * state machine directory away when it installs a snapshot), the public gRPC API (KV and Cluster,
 * plus the node-to-node snapshot transfer) on the API address, and the HTTP endpoints.
 *
 * <p>Started with Ratis's FORMAT option on a new directory and RECOVER on an existing one (FORMAT
 * fails when the storage exists). A node started with {@code join} waits, outside any
 * configuration, until a member adds it.
 */
public final class ShaleNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShaleNode.class);

  /** Threads of the API server's executor. */
  private static final int API_THREADS = 16;

  /**
   * The group of a cluster: its id is derived from the cluster name, so nodes started from the same
   * configuration agree without exchanging it. Each peer carries its API address in Ratis's
   * data-stream address field, which is how a follower finds the leader's snapshot service and how
   * Status reaches every member. (Not the client address: Ratis's own clients send to that one. The
   * data-stream field is free because Ratis's DataStream API is disabled here.)
   */
  public static RaftGroup group(String clusterName, List<NodeConfig.Peer> peers) {
    List<RaftPeer> list = new ArrayList<>();
    for (NodeConfig.Peer p : peers) {
      list.add(
          RaftPeer.newBuilder()
              .setId(p.id())
              .setAddress(p.raftAddress())
              .setDataStreamAddress(p.apiAddress())
              .build());
    }
    return RaftGroup.valueOf(groupId(clusterName), list);
  }

  static RaftGroupId groupId(String clusterName) {
    return RaftGroupId.valueOf(
        UUID.nameUUIDFromBytes(clusterName.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * Ratis settings every node of a cluster shares (client and servers): linearizable reads through
   * ReadIndex; elections after the election timeout to twice that without a leader; snapshots in
   * notification mode (the state machine fetches checkpoints itself, sending only missing files),
   * taken automatically every {@code snapshotEveryEntries}; the log purged up to each snapshot but
   * its last {@code logKeepEntries} even when a follower is down (a follower further behind catches
   * up from the snapshot, as in etcd, rather than the leader keeping the log forever; one only a
   * little behind, or a new member still catching up, goes on from the log); pending writes
   * bounded.
   */
  public static RaftProperties properties(NodeConfig.RaftSettings s, NodeConfig.Limits limits) {
    return properties(s, limits, NodeConfig.Memory.defaults());
  }

  /**
   * As {@link #properties(NodeConfig.RaftSettings, NodeConfig.Limits)}, with every buffer Ratis
   * holds on the heap bounded by the node's budgets ({@link HeapBudget}): the log entries cached
   * ({@code memory.raft_log_cache}), the entries queued for the log writer (as many bytes as the
   * leader's pending writes), the appends in flight to each follower ({@code
   * memory.raft_appends_in_flight}), and the HTTP/2 window of the Raft port (1 MiB a stream: an
   * unread stream holds no more).
   */
  public static RaftProperties properties(
      NodeConfig.RaftSettings s, NodeConfig.Limits limits, NodeConfig.Memory memory) {
    RaftProperties p = new RaftProperties();
    // gRPC, with a leader that tells followers of each commit promptly (PromptCommitAppender).
    PromptCommitRpc.install(p, s.commitUpdateDelay());
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, s.leaseReads());
    long min = s.electionTimeout().toMillis();
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(min, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * min, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
    // No commit-index metadata entries: by default Ratis appends one to the log (and replicates
    // and fsyncs it) after every commit, doubling the log rounds per write. Restart does not
    // need it: the engine's persisted index says what is applied and durable.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // Off, against Ratis's default: with "append-entries compose" a follower that receives a
    // request starting where one still being written starts answers SUCCESS up to the second
    // one's last entry while only the first one's entries get written. The leader then never
    // resends the difference and the follower stays behind for good (FollowerAppendTest).
    // Without it each request is appended in order.
    RaftServerConfigKeys.Log.setAppendEntriesComposeEnabled(p, false);
    RaftServerConfigKeys.Log.Appender.setWaitTimeMin(
        p, TimeDuration.valueOf(s.replicationBatchWait().toMillis(), TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Log.Appender.setRetryPolicy(
        p, followerRetryPolicy(s.followerRetryMaxWait()));
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, s.snapshotEveryEntries());
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(s.logSegmentSize()));
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(Integer.MAX_VALUE, s.purgeGap()));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgePreservationLogNum(p, s.logKeepEntries());
    RaftServerConfigKeys.Write.setElementLimit(p, s.pendingWriteLimit());
    RaftServerConfigKeys.Write.setByteLimit(p, SizeInBytes.valueOf(s.pendingWriteBytes()));
    GrpcConfigKeys.setMessageSizeMax(
        p, SizeInBytes.valueOf(Math.max(64L << 20, 2L * limits.maxMessageBytes())));
    // Ratis refuses a log entry larger than its appender buffer (4 MB by default), which a
    // 16 MiB value (or a group commit of many 64 KiB values) is: room for the largest entry.
    long largestEntry = Math.max(4L << 20, limits.maxMessageBytes() + s.groupCommitMaxBytes());
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf(largestEntry));
    // Ratis requires its log write buffer to hold the largest entry.
    RaftServerConfigKeys.Log.setWriteBufferSize(
        p, SizeInBytes.valueOf(Math.max(8L << 20, largestEntry + 1024)));
    // Ratis's defaults are 6 cached segments or 200 MB (whichever comes first), 64 MB queued for
    // the log writer and 8 appends in flight per follower: together more than a 512 MiB heap holds
    // beside the memtables.
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(
        p, SizeInBytes.valueOf(memory.raftLogCacheBytes()));
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(
        p, (int) Math.max(2, memory.raftLogCacheBytes() / s.logSegmentSize()));
    RaftServerConfigKeys.Log.setQueueByteLimit(
        p, SizeInBytes.valueOf(Math.max(s.pendingWriteBytes(), largestEntry)));
    GrpcConfigKeys.Server.setLeaderOutstandingAppendsMax(p, memory.raftAppendsInFlight());
    GrpcConfigKeys.setFlowControlWindow(p, SizeInBytes.valueOf(1 << 20));
    return p;
  }

  /**
   * The leader's waits between attempts to reach a failing follower: ten quick retries, ten at a
   * tenth of {@code max}, then {@code max} for good. Ratis's default ("1ms,10, 1s,20, 5s,1000")
   * reaches 5 s after about 30 failures, which a follower down for ten seconds already has: once
   * back it got neither appends nor heartbeats for 5 s at a time, knew no leader and stalled
   * (RestartIT; LeaderRetryPolicyTest).
   */
  static String followerRetryPolicy(Duration max) {
    long maxMs = Math.max(1, max.toMillis());
    long midMs = Math.max(1, maxMs / 10);
    return "1ms,10, " + midMs + "ms,10, " + maxMs + "ms," + Integer.MAX_VALUE;
  }

  /** How often {@link DivisionWatch} looks at the Raft division's state. */
  private static final Duration DIVISION_WATCH_PERIOD = Duration.ofMillis(500);

  private final NodeConfig config;
  private final RaftServer server;
  private final ShaleStateMachine stateMachine;
  private final PrometheusMeterRegistry registry;
  private final JvmGcMetrics jvmGc;
  private final RaftGroup group;
  private final RaftTransport transport;

  /** This node's certificate, key and CA with {@code [tls]}; null for plaintext. */
  private final PeerTls peerTls;

  private final PeerServices peerServices;
  private final PeerChannels peerChannels;
  private PressurePoller poller;
  private LogSizeSnapshots logSizeSnapshots;
  private ForwardingClient forwarder;
  private Server api;

  /**
   * Runs the API server's calls (parsing, admission, the cluster and snapshot services); KV calls
   * hand their waiting to KvService's own bounded handlers, so a few threads suffice.
   */
  private ExecutorService apiExecutor;

  private KvService kv;
  private WatchService watch;
  private LeaseExpiry leaseExpiry;
  private LeaseService leaseService;
  private ScheduledExecutorService leaseChecks;
  private HttpEndpoints http;
  private AuditLog auditLog;
  private ScheduledExecutorService certificateWatch;
  private RaftMeters raftMeters;
  private RatisMetricsBridge ratisMetrics;
  private LeftoverSenders leftoverSenders;
  private final DivisionWatch divisionWatch = new DivisionWatch();
  private Consumer<String> onDivisionLost = why -> {};

  private ShaleNode(
      NodeConfig config,
      RaftServer server,
      ShaleStateMachine stateMachine,
      PrometheusMeterRegistry registry,
      RaftGroup group,
      RaftTransport transport,
      PeerTls peerTls,
      PeerServices peerServices,
      PeerChannels peerChannels) {
    this.peerTls = peerTls;
    this.config = config;
    this.server = server;
    this.stateMachine = stateMachine;
    this.registry = registry;
    // The JVM's heap pools and collections, beside the budget they are held against.
    new JvmMemoryMetrics().bindTo(registry);
    this.jvmGc = new JvmGcMetrics();
    jvmGc.bindTo(registry);
    HeapBudget.of(config).register(registry, config.id());
    this.group = group;
    this.transport = transport;
    this.peerServices = peerServices;
    this.peerChannels = peerChannels;
  }

  /** Starts the node: Raft, the gRPC API and, when configured, the HTTP endpoints. */
  public static ShaleNode start(NodeConfig config) throws IOException {
    return start(config, false);
  }

  /**
   * Starts the node; with {@code join}, a node with no Raft storage yet starts outside any
   * configuration and waits to be added ({@code Cluster.AddMember}).
   */
  public static ShaleNode start(NodeConfig config, boolean join) throws IOException {
    return start(config, join, why -> {});
  }

  /**
   * As {@link #start(NodeConfig, boolean)}; {@code onDivisionLost} runs once if Ratis closes this
   * node's Raft division outside {@link #close} ({@link DivisionWatch}): NodeMain exits so that a
   * supervisor restarts the node on its data.
   */
  public static ShaleNode start(NodeConfig config, boolean join, Consumer<String> onDivisionLost)
      throws IOException {
    long t0 = System.nanoTime();
    ClusterIdentity.claim(config.dataDir(), config.cluster());
    RaftGroup group = group(config.cluster(), config.peers());
    RaftProperties shared = properties(config.raft(), config.limits(), config.memory());
    PeerTls peerTls = peerTls(config);
    RaftTransport transport = new RaftTransport(shared, peerTls);
    PeerChannels peerChannels = new PeerChannels(peerTls, config.limits().maxMessageBytes());
    RaftProperties p = new RaftProperties(shared);
    Path raftDir = config.dataDir().resolve("raft");
    boolean existing = Files.isDirectory(raftDir) && hasContent(raftDir);
    Files.createDirectories(raftDir);
    RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
    GrpcConfigKeys.Server.setHost(p, NodeConfig.host(config.raftAddress()));
    GrpcConfigKeys.Server.setPort(p, NodeConfig.port(config.raftAddress()));
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config().commonTags("node", config.id());
    ShaleStateMachine sm =
        new ShaleStateMachine(
            config.dataDir(),
            config.engine(),
            registry,
            config.raft().stateMachine(config.limits().scanPageBytes()),
            peerChannels);
    WatchService watch =
        new WatchService(
            config.watch().historyBytes(),
            config::id,
            () -> {
              var applied = sm.getLastAppliedTermIndex();
              return applied == null ? 0 : applied.getTerm();
            },
            config.watch().progressInterval(),
            config.watch().previousValues());
    sm.publishChangesTo(watch); // before the engine opens: the history starts where it does
    LeaseExpiry leases = new LeaseExpiry(config.id(), System::nanoTime, registry);
    sm.publishLeasesTo(leases); // before the engine opens, which hands it the leases
    sm.onLeaderChange(leases::leaderChanged);
    RaftGroup initial = join && !existing ? RaftGroup.valueOf(group.getGroupId()) : group;
    // Every Raft message must be for this node (see RaftRecipientCheck), and from a node when
    // the port speaks mutual TLS; the peer-only services answer on the same port.
    PeerServices peerServices =
        new PeerServices(
            new RaftPortLimits(
                (int) Math.min(Integer.MAX_VALUE, HeapBudget.appendBytes(config) + (1 << 20)),
                new RaftRecipientCheck(config.id())));
    Parameters parameters = transport.serverParameters(peerServices);
    RaftServer server =
        RaftServer.newBuilder()
            .setServerId(RaftPeerId.valueOf(config.id()))
            .setGroup(initial)
            .setProperties(p)
            .setParameters(parameters)
            .setStateMachine(sm)
            .setOption(
                existing ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
            .build();
    long t1 = System.nanoTime();
    server.start(); // opens the engine (ShaleStateMachine.initialize) and recovers the Raft log
    long t2 = System.nanoTime();
    ShaleNode node =
        new ShaleNode(
            config, server, sm, registry, group, transport, peerTls, peerServices, peerChannels);
    node.onDivisionLost = onDivisionLost;
    node.watch = watch;
    node.leaseExpiry = leases;
    try {
      node.startServices();
    } catch (IOException | RuntimeException e) {
      node.close();
      throw e;
    }
    // Where a start's time goes, for an operator waiting on a restart.
    LOG.info(
        "{} serving: set up in {} ms, Raft server and engine started in {} ms, services in {} ms",
        config.id(),
        TimeUnit.NANOSECONDS.toMillis(t1 - t0),
        TimeUnit.NANOSECONDS.toMillis(t2 - t1),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t2));
    return node;
  }

  /**
   * The node's TLS from {@code [tls]} (mutual on the Raft port, server-side on the API port),
   * checked before anything listens; null (and a warning) when the node is configured without it.
   */
  private static PeerTls peerTls(NodeConfig config) {
    if (config.tls() == null && !config.insecure()) {
      throw new IllegalArgumentException(
          "[tls] is not set: set tls.ca_file, tls.cert_file and tls.key_file (shalectl cert makes"
              + " them; docs/security.md), or node.insecure = true to serve every port in"
              + " plaintext to anyone (trusted networks and tests only)");
    }
    if (config.tls() == null) {
      LOG.warn(
          "{}: INSECURE (node.insecure = true): the Raft port {} and the API port {} are"
              + " plaintext and check no caller: anyone who can reach the Raft port can append log"
              + " entries, anyone who can reach the API port can read, write and administer. Set"
              + " [tls] ca_file, cert_file and key_file instead.",
          config.id(),
          config.raftAddress(),
          config.apiAddress());
      return null;
    }
    PeerTls tls = PeerTls.load(config.tls(), Instant.now());
    LOG.info(
        "{}: the Raft port {} speaks mutual TLS with peers named \"{}\", the API port {} TLS "
            + "(certificate {} valid until {})",
        config.id(),
        config.raftAddress(),
        config.apiAddress(),
        tls.peerName(),
        config.tls().certFile(),
        tls.notAfter());
    return tls;
  }

  /**
   * A Raft client for one administration call (membership, leadership, snapshot) over {@code
   * members}, aimed at {@code leader} ({@link ClusterService.AdminClients}). Not the forwarder of
   * writes: these requests wait far longer (a new member is staged until it has caught up), and
   * with the forwarder's 3 s request timeout a change was sent again while its own staging ran,
   * refused as "in progress", and retried for ten seconds past the caller's deadline. Not retried:
   * a change refused because another is in progress (the caller decides when to ask again, as with
   * etcd), one whose new member made no progress (sent again, it would stage that member again),
   * one that got no answer in time (it may still commit). Other failures (a leader not ready, a
   * connection) are retried, 40 attempts in all.
   */
  private RaftClient adminClient(RaftGroup members, RaftPeerId leader) {
    RaftProperties p = new RaftProperties(transport.properties());
    RaftClientConfigKeys.Rpc.setRequestTimeout(
        p, TimeDuration.valueOf(config.raft().adminTimeout().toMillis(), TimeUnit.MILLISECONDS));
    RetryPolicy noRetry = RetryPolicies.noRetry();
    return transport
        .client(p)
        .setRaftGroup(members)
        .setLeaderId(leader)
        .setRetryPolicy(
            ExceptionDependentRetry.newBuilder()
                .setDefaultPolicy(
                    RetryPolicies.retryForeverWithSleep(
                        TimeDuration.valueOf(250, TimeUnit.MILLISECONDS)))
                .setExceptionToPolicy(ReconfigurationInProgressException.class, noRetry)
                .setExceptionToPolicy(ReconfigurationTimeoutException.class, noRetry)
                .setExceptionToPolicy(TimeoutIOException.class, noRetry)
                .setMaxAttempts(40)
                .build())
        .build();
  }

  /** Voting members of the current configuration (1 before the group is up). */
  private int currentVoters() {
    try {
      return server.getDivision(group.getGroupId()).getRaftConf().getCurrentPeers().size();
    } catch (IOException notYet) {
      return 1;
    }
  }

  private void startServices() throws IOException {
    ReplicaPressure replicas =
        new ReplicaPressure(
            config.id(),
            () -> {
              Engine e = stateMachine.engine();
              return e == null ? WritePressure.NONE : e.writePressure();
            },
            config.raft().pressureReportMaxAge());
    WriteAdmission admission =
        new WriteAdmission(replicas, this::currentVoters, config.raft().pressureMaxDelay());
    stateMachine.gateWritesOn(admission);
    // Writes and linearizable reads that reach a follower go to the leader through this client's
    // async API, so that a handler waits only until its call's deadline. A request its caller gave
    // up on is still retried here (safe: request ids make a resend apply once) until the retry
    // policy ends it, and holds one of the client's outstanding slots meanwhile: as many slots as
    // the node admits requests, so abandoned ones cannot starve new ones.
    RaftProperties forwarding = new RaftProperties(transport.properties());
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(
        forwarding, config.limits().maxInflightRequests());
    forwarder =
        new ForwardingClient(
            () ->
                transport
                    .client(forwarding)
                    .setRaftGroup(group)
                    .setRetryPolicy(
                        RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                            100, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                    .build());
    RaftServer.Division division = server.getDivision(group.getGroupId());
    divisionWatch.start(
        DivisionWatch.of(server, group.getGroupId()), DIVISION_WATCH_PERIOD, onDivisionLost);
    raftMeters = new RaftMeters(division, registry);
    stateMachine.onLeaderChange(leader -> raftMeters.leaderChanged());
    leftoverSenders = new LeftoverSenders(server, division);
    stateMachine.onLeaderChange(leftoverSenders::elected);
    ratisMetrics = new RatisMetricsBridge(registry);
    GrpcMeters grpcMeters = new GrpcMeters(registry);
    kv =
        new KvService(
            division,
            stateMachine,
            forwarder,
            new RequestLimits(
                config.limits().maxKeyBytes(),
                config.limits().maxValueBytes(),
                config.limits().maxBatchOps(),
                config.limits().maxScanEntries(),
                config.limits().deleteRangeChunkKeys(),
                config.limits().maxTxnOps()),
            registry,
            new GroupCommit.Bounds(
                config.raft().groupCommitThreads(),
                config.raft().groupCommitMaxWrites(),
                config.raft().groupCommitMaxBytes()),
            new CallRunner.Admission(
                config.limits().maxInflightRequests(),
                config.limits().maxInflightWriteBytes(),
                config.limits().handlerThreads(),
                config.limits().virtualHandlers()),
            admission,
            config.raft().followerReads());
    leaseService =
        kv.leases(config.lease().minTtl(), config.lease().maxTtl(), stateMachine::authState);
    leaseExpiry.revokeWith(leaseService::revokeExpired);
    leaseChecks =
        Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named(config.id() + "-lease-expiry"));
    long checkEvery = Math.max(1, config.lease().checkInterval().toMillis());
    leaseChecks.scheduleWithFixedDelay(
        leaseExpiry::check, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
    ClusterService cluster =
        new ClusterService(
            division, stateMachine, this::adminClient, peerChannels, config.raft().adminTimeout());
    apiExecutor =
        Executors.newFixedThreadPool(API_THREADS, DaemonThreads.numbered(config.id() + "-api-"));
    AuthService auth =
        new AuthService(
            division,
            stateMachine,
            forwarder,
            registry,
            config.tokenTtl(),
            System::currentTimeMillis);
    // With TLS (where callers are checked and tokens used) the first leader proposes the key
    // tokens are signed with, and so does any later one that finds none: off the apply thread,
    // which calls listeners.
    if (peerTls != null) {
      stateMachine.onLeaderChange(
          leader -> {
            if (leader.equals(config.id())) {
              apiExecutor.execute(() -> proposeTokenKey(auth));
            }
          });
    }
    // Peers reach each other's status, forwarded work and snapshots on the Raft port only.
    peerServices.bind(cluster);
    peerServices.bind(
        new SnapshotTransferService(stateMachine.checkpoints(), stateMachine::takeCheckpoint));
    NettyServerBuilder apiBuilder =
        NettyServerBuilder.forAddress(
            new InetSocketAddress(
                NodeConfig.host(config.apiAddress()), NodeConfig.port(config.apiAddress())));
    if (peerTls != null) {
      apiBuilder.sslContext(peerTls.apiServer());
    }
    // With TLS every call is made by a user and checked against its roles; without, the node
    // serves anyone (it warned at start). The audit trail sits outside the guard to see its
    // refusals (the last interceptor listed runs first).
    auditLog =
        new AuditLog(
            config.id(),
            config.dataDir().resolve("audit"),
            config.audit().maxFileBytes(),
            config.audit().maxFiles());
    AuditTrail audit = new AuditTrail(auditLog, System::currentTimeMillis);
    List<ServerInterceptor> guard =
        peerTls == null
            ? List.of(audit, grpcMeters)
            : List.of(
                new ApiGuard(stateMachine::authState, System::currentTimeMillis, kv::caughtUp),
                audit,
                grpcMeters);
    // Every request counts against the in-flight limit from its arrival, before its parse.
    int largest = config.limits().maxMessageBytes();
    for (BindableService service :
        List.of(
            kv,
            cluster,
            auth,
            watch,
            leaseService,
            new BackupService(stateMachine, division, config.cluster()))) {
      apiBuilder.addService(
          kv.admittedOnArrival(ServerInterceptors.intercept(service, guard), largest));
    }
    api = apiBuilder.maxInboundMessageSize(largest).executor(apiExecutor).build().start();
    logSizeSnapshots =
        new LogSizeSnapshots(
            server,
            group.getGroupId(),
            division.getRaftStorage().getStorageDir().getCurrentDir().toPath(),
            config.raft().snapshotEveryBytes(),
            config.raft().purgeGap(),
            config.raft().logKeepEntries(),
            config.raft().adminTimeout(),
            () -> division.getInfo().getLastAppliedIndex(),
            registry);
    poller =
        new PressurePoller(
            config.id(),
            () -> division.getRaftConf().getCurrentPeers(),
            group.getGroupId(),
            transport,
            replicas,
            config.raft().pressurePollInterval(),
            registry);
    if (peerTls != null) {
      certificateWatch =
          Executors.newSingleThreadScheduledExecutor(
              DaemonThreads.named(config.id() + "-certificate-watch"));
      long every = Math.max(1, peerTls.files().reloadInterval().toMillis());
      certificateWatch.scheduleWithFixedDelay(
          this::reloadCertificates, every, every, TimeUnit.MILLISECONDS);
    }
    if (config.httpAddress() != null) {
      http =
          new HttpEndpoints(
              config.httpAddress(), registry, this::refreshMeters, this::notReadyReason);
    }
  }

  /** Takes changed certificate files (a rotation), or says why not and keeps the current ones. */
  private void reloadCertificates() {
    String outcome;
    String detail;
    try {
      if (!peerTls.reloadIfChanged(Instant.now())) {
        return;
      }
      outcome = "OK";
      detail =
          "serial " + peerTls.serialNumber().toString(16) + ", valid until " + peerTls.notAfter();
      LOG.info("{}: reloaded its certificate: {}", config.id(), detail);
    } catch (RuntimeException e) {
      outcome = "FAILED_PRECONDITION";
      detail = e.getMessage();
      LOG.error(
          "{}: certificate files changed but were not taken, keeping the current ones: {}",
          config.id(),
          e.getMessage());
    }
    AuditLog audit = auditLog;
    if (audit != null) {
      audit.record(
          System.currentTimeMillis(),
          new AuditLog.Entry(
              "",
              "none",
              "",
              "tls.reload",
              peerTls.files().certFile().toString(),
              outcome,
              detail));
    }
  }

  private void proposeTokenKey(AuthService auth) {
    try {
      auth.ensureTokenKey();
    } catch (StatusException | RuntimeException e) {
      // The next leader tries again, and so does the first Authenticate.
      LOG.warn("{}: could not propose the token key: {}", config.id(), e.toString());
    }
  }

  private void refreshMeters() {
    raftMeters.refresh();
    ratisMetrics.refresh();
  }

  /**
   * Why this node is not ready to serve, or null when it is: ready means caught up, that is, a
   * leader is known and this node has applied everything the leader had committed when it last told
   * this node (Ratis passes the leader's commit index along with its appends). This node's own
   * commit index is not enough: it never passes the end of its own log, so a restarted follower
   * missing thousands of entries would call itself caught up after the first append.
   */
  String notReadyReason() {
    try {
      RaftServer.Division d = server.getDivision(group.getGroupId());
      if (!d.getInfo().isAlive()) {
        return "Raft group " + d.getInfo().getLifeCycleState();
      }
      RaftPeerId leader = d.getInfo().getLeaderId();
      if (leader == null) {
        return "no leader known";
      }
      long committed = -1;
      if (d.getInfo().isLeader()) {
        committed = d.getRaftLog().getLastCommittedIndex();
      } else {
        for (CommitInfoProto c : d.getCommitInfos()) {
          if (RaftPeerId.valueOf(c.getServer().getId()).equals(leader)) {
            committed = c.getCommitIndex();
          }
        }
        if (committed < 0) {
          // Known from the first append, which the leader sends before it has found where this
          // node's log ends, and which carries no commit index until then.
          return "the leader's (" + leader + ") commit index not known yet";
        }
      }
      long applied = d.getInfo().getLastAppliedIndex();
      if (applied < committed) {
        return "applied index " + applied + " behind the leader's commit index " + committed;
      }
      return stateMachine.engine() == null ? "installing a snapshot" : null;
    } catch (IOException e) {
      return "no Raft group: " + e.getMessage();
    }
  }

  private static boolean hasContent(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.findAny().isPresent();
    }
  }

  /** The port the gRPC API listens on. */
  public int apiPort() {
    return api.getPort();
  }

  /** The port of the HTTP endpoints, or -1 if none are configured. */
  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  public NodeConfig config() {
    return config;
  }

  public RaftServer server() {
    return server;
  }

  public RaftGroup group() {
    return group;
  }

  /**
   * Completes once this node has applied every entry the leader had committed when called (see
   * {@link KvService#caughtUp}).
   */
  public java.util.concurrent.CompletableFuture<?> caughtUp() {
    return kv.caughtUp();
  }

  public ShaleStateMachine stateMachine() {
    return stateMachine;
  }

  /** This node's TLS material ({@code [tls]}), or null when it runs insecure. */
  public PeerTls peerTls() {
    return peerTls;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Stops serving clients first, then leaves Raft; closing twice is harmless. */
  @Override
  public synchronized void close() throws IOException {
    divisionWatch.close();
    if (certificateWatch != null) {
      certificateWatch.shutdownNow();
    }
    if (http != null) {
      http.close();
      http = null;
    }
    if (watch != null) {
      watch.close(); // first: its streams end now and their clients resume elsewhere
    }
    if (leaseChecks != null) {
      leaseChecks.shutdownNow();
    }
    if (leaseService != null) {
      leaseService.close(); // keep-alive streams too
    }
    if (api != null) {
      api.shutdown();
      try {
        if (!api.awaitTermination(5, TimeUnit.SECONDS)) {
          api.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      api = null;
    }
    if (apiExecutor != null) {
      apiExecutor.shutdownNow();
    }
    if (auditLog != null) {
      auditLog.close();
      auditLog = null;
    }
    if (kv != null) {
      kv.close();
    }
    if (peerChannels != null) {
      peerChannels.close();
    }
    if (forwarder != null) {
      forwarder.close();
      forwarder = null;
    }
    if (logSizeSnapshots != null) {
      logSizeSnapshots.close();
      logSizeSnapshots = null;
    }
    if (poller != null) {
      poller.close();
      poller = null;
    }
    if (leftoverSenders != null) {
      leftoverSenders.close();
      leftoverSenders = null;
    }
    server.close();
    jvmGc.close();
  }
}
