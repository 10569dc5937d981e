package io.shale.node.server;

import io.shale.engine.EngineOptions;
import io.shale.engine.config.ByteSize;
import io.shale.engine.config.EngineConfig;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.transport.PeerTls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.tomlj.Toml;
import org.tomlj.TomlArray;
import org.tomlj.TomlParseResult;
import org.tomlj.TomlTable;

/**
 * Everything one node needs to start, read from its TOML file ({@code ops/config/node.toml}
 * documents every key) with command-line overrides of the form {@code section.key=value} for any
 * key outside {@code [lsm]} and {@code [[peers]]}.
 *
 * <p>Invalid configuration fails at start with an {@link IllegalArgumentException} that names the
 * dotted key, so an operator can fix the file without reading code.
 *
 * @param peers every voting member, this node included, in a stable order
 * @param tls the PEM files of the Raft port's mutual TLS, or null when it is plaintext
 */
public record NodeConfig(
    String id,
    String cluster,
    Path dataDir,
    String raftAddress,
    String apiAddress,
    String httpAddress,
    List<Peer> peers,
    RaftSettings raft,
    Limits limits,
    EngineOptions engine,
    PeerTls.Files tls,
    Duration tokenTtl,
    Audit audit,
    boolean insecure,
    Watch watch,
    Lease lease,
    Memory memory) {

  /** How long a token from Auth.Authenticate is valid unless {@code auth.token_ttl} says. */
  public static final Duration DEFAULT_TOKEN_TTL = Duration.ofMinutes(10);

  /**
   * As the canonical constructor, with tokens valid for {@link #DEFAULT_TOKEN_TTL}, the default
   * audit log, and insecure exactly when {@code tls} is null (a configuration built in code says
   * what it means; one read from TOML must say {@code insecure = true} itself).
   */
  public NodeConfig(
      String id,
      String cluster,
      Path dataDir,
      String raftAddress,
      String apiAddress,
      String httpAddress,
      List<Peer> peers,
      RaftSettings raft,
      Limits limits,
      EngineOptions engine,
      PeerTls.Files tls) {
    this(
        id,
        cluster,
        dataDir,
        raftAddress,
        apiAddress,
        httpAddress,
        peers,
        raft,
        limits,
        engine,
        tls,
        DEFAULT_TOKEN_TTL,
        Audit.defaults(),
        tls == null,
        Watch.defaults(),
        Lease.defaults(),
        Memory.defaults());
  }

  /**
   * The engine settings a node starts from where {@code [lsm]} says nothing: the engine's own
   * defaults but for its memtables, 32 MiB with at most 2 sealed ones waiting for flush (96 MiB of
   * heap at most, against 320 MiB for the engine alone), since a node shares its heap with Raft's
   * buffers, requests in flight and the watch history ({@link HeapBudget}).
   */
  public static EngineOptions engineDefaults() {
    return EngineOptions.defaults().withMemtableSize(32L << 20).withMaxImmutableMemtables(2);
  }

  /**
   * How a node's heap is divided beyond the budgets other sections already set ({@code [memory]};
   * {@link HeapBudget} adds them up).
   *
   * @param heapHeadroom the share of the maximum heap kept out of every budget, for the young
   *     generation and garbage not yet collected; a node whose budgets need more of its heap than
   *     the rest refuses to start
   * @param raftLogCacheBytes log entries Ratis keeps in memory beyond the segment being written
   *     (Ratis's segment cache), from which a follower that is a little behind is served without a
   *     disk read
   * @param raftAppendsInFlight appends a leader sends a follower before an answer (Ratis's
   *     outstanding appends); each holds up to one append's bytes on the follower while it writes
   */
  public record Memory(double heapHeadroom, long raftLogCacheBytes, int raftAppendsInFlight) {
    public static Memory defaults() {
      return new Memory(0.25, 24L << 20, 4);
    }

    public Memory {
      if (!(heapHeadroom >= 0.1 && heapHeadroom <= 0.9)) {
        throw new IllegalArgumentException(
            "memory.heap_headroom must be in [0.1, 0.9], got " + heapHeadroom);
      }
      if (raftAppendsInFlight < 1 || raftAppendsInFlight > 128) {
        throw new IllegalArgumentException(
            "memory.raft_appends_in_flight must be in [1, 128], got " + raftAppendsInFlight);
      }
    }
  }

  /**
   * Watches ({@code [watch]}): the change history each node keeps for them, and how often a quiet
   * stream gets a progress response.
   */
  public record Watch(long historyBytes, Duration progressInterval, boolean previousValues) {
    public static Watch defaults() {
      return new Watch(24L << 20, Duration.ofSeconds(5), false);
    }
  }

  /**
   * Leases ({@code [lease]}): the TTLs a grant may ask for, and how often the leader looks for
   * leases whose TTL has run out (a lease expires at most about this much late).
   */
  public record Lease(Duration minTtl, Duration maxTtl, Duration checkInterval) {
    public static Lease defaults() {
      return new Lease(Duration.ofSeconds(2), Duration.ofHours(24), Duration.ofMillis(250));
    }

    public Lease {
      if (minTtl.compareTo(maxTtl) > 0) {
        throw new IllegalArgumentException(
            "lease.min_ttl (" + minTtl + ") is above lease.max_ttl (" + maxTtl + ")");
      }
      if (maxTtl.toMillis() > io.shale.node.statemachine.CommandCodec.MAX_LEASE_TTL_MILLIS) {
        throw new IllegalArgumentException("lease.max_ttl may be at most 365 days");
      }
    }
  }

  /**
   * The audit log ({@code [audit]}): rotated past {@code maxFileBytes}, {@code maxFiles} old files
   * kept.
   */
  public record Audit(long maxFileBytes, int maxFiles) {
    public static Audit defaults() {
      return new Audit(16L << 20, 5);
    }
  }

  public NodeConfig {
    peers = List.copyOf(peers);
    if (insecure && tls != null) {
      throw new IllegalArgumentException(
          "node.insecure = true and [tls] are both set: a node either speaks TLS or not");
    }
    if (peers.stream().noneMatch(p -> p.id().equals(id))) {
      throw new IllegalArgumentException(
          "node.id \""
              + id
              + "\" is not one of the peers "
              + peers.stream().map(Peer::id).toList());
    }
  }

  /** A member of the cluster: where its Raft traffic and its client API listen. */
  public record Peer(String id, String raftAddress, String apiAddress) {}

  /**
   * Consensus settings.
   *
   * @param electionTimeout a follower without a leader for this long (to twice it, randomized)
   *     starts an election; 1 s as etcd: with 300 ms, leaders lost their term on a busy 2-core
   *     machine, where heartbeats wait for CPU
   * @param snapshotEveryEntries take a snapshot (an engine checkpoint) after this many log entries,
   *     after which the log before it may be purged
   * @param logSegmentSize a closed segment of this size is the unit the log is purged in
   * @param purgeGap purge only when the snapshot moved this many entries past the last purge
   * @param pendingWriteLimit writes accepted by the leader but not yet applied, beyond which new
   *     ones are refused as throttled
   * @param pendingWriteBytes the same bound in bytes
   * @param pressureReportMaxAge a follower's write-pressure report older than this is ignored
   * @param pressurePollInterval how often the leader asks each follower for its pressure
   * @param adminTimeout how long a membership change, leadership transfer or snapshot call waits
   *     for the leader's answer
   * @param groupCommitThreads log entries of grouped client writes in flight at once
   * @param groupCommitMaxWrites writes in one group (one log entry)
   * @param groupCommitMaxBytes bytes after which a group stops growing
   * @param snapshotReloadWait how long a snapshot fetch waits for the reload of the install before
   *     it
   * @param snapshotInstallSettle how long after a reload a new fetch still waits (Ratis marks its
   *     applier running again a few statements after the reload returns)
   * @param checkpointLease a snapshot transfer's pin on a checkpoint lapses after this long unused
   * @param pressureMaxDelay the longest a write is delayed for slow replicas while a quorum can
   *     take writes
   * @param snapshotEveryBytes also take a snapshot once the Raft log segments on disk exceed this
   *     many bytes, so that the log (which a restart reads again) stays bounded
   * @param followerRetryMaxWait the longest a leader waits before trying again to reach a follower
   *     whose appends keep failing (down, restarting, or refusing them as out of order)
   * @param followerReads followers answer linearizable reads themselves, after a read index from
   *     the leader, so that reads spread over the cluster instead of all reaching the leader
   * @param leaseReads the leader answers linearizable reads under its lease (a majority heard from
   *     within 0.9 of the minimum election timeout, by its monotonic clock) without a heartbeat
   *     round; safe while the nodes' clocks run at rates within 10% of each other
   * @param logKeepEntries entries a purge leaves in the log before the snapshot, so that a follower
   *     that was only that far behind when the leader snapshotted catches up from the log instead
   *     of installing a snapshot (etcd keeps 5,000); 0 purges up to the snapshot
   * @param replicationBatchWait the least time between two sends of the leader to one follower
   *     (Ratis's appender wait-time.min, whole milliseconds): entries arriving meanwhile go in the
   *     next send together; 0 sends each at once
   * @param commitUpdateDelay how long the leader waits for an entry to carry a new commit index to
   *     a follower before sending it in an empty append; followers apply committed entries (and
   *     answer reads and watches) at most about this much after the leader
   */
  public record RaftSettings(
      Duration electionTimeout,
      long snapshotEveryEntries,
      long logSegmentSize,
      long purgeGap,
      int pendingWriteLimit,
      long pendingWriteBytes,
      Duration pressureReportMaxAge,
      Duration pressurePollInterval,
      Duration adminTimeout,
      int groupCommitThreads,
      int groupCommitMaxWrites,
      long groupCommitMaxBytes,
      Duration snapshotReloadWait,
      Duration snapshotInstallSettle,
      Duration checkpointLease,
      Duration pressureMaxDelay,
      Duration followerRetryMaxWait,
      long snapshotEveryBytes,
      boolean followerReads,
      boolean leaseReads,
      long logKeepEntries,
      Duration replicationBatchWait,
      Duration commitUpdateDelay) {
    /** The consensus settings with every later knob at its default. */
    public RaftSettings(
        Duration electionTimeout,
        long snapshotEveryEntries,
        long logSegmentSize,
        long purgeGap,
        int pendingWriteLimit,
        long pendingWriteBytes,
        Duration pressureReportMaxAge,
        Duration pressurePollInterval) {
      this(
          electionTimeout,
          snapshotEveryEntries,
          logSegmentSize,
          purgeGap,
          pendingWriteLimit,
          pendingWriteBytes,
          pressureReportMaxAge,
          pressurePollInterval,
          Duration.ofSeconds(30),
          4,
          256,
          1 << 20,
          Duration.ofSeconds(60),
          Duration.ofMillis(200),
          Duration.ofSeconds(120),
          Duration.ofMillis(100),
          Duration.ofMillis(500),
          256L << 20,
          true,
          true,
          1024,
          Duration.ofMillis(1),
          Duration.ofMillis(5));
    }

    /** These settings with {@code logKeepEntries} instead. */
    public RaftSettings withLogKeepEntries(long keep) {
      return new RaftSettings(
          electionTimeout,
          snapshotEveryEntries,
          logSegmentSize,
          purgeGap,
          pendingWriteLimit,
          pendingWriteBytes,
          pressureReportMaxAge,
          pressurePollInterval,
          adminTimeout,
          groupCommitThreads,
          groupCommitMaxWrites,
          groupCommitMaxBytes,
          snapshotReloadWait,
          snapshotInstallSettle,
          checkpointLease,
          pressureMaxDelay,
          followerRetryMaxWait,
          snapshotEveryBytes,
          followerReads,
          leaseReads,
          keep,
          replicationBatchWait,
          commitUpdateDelay);
    }

    public static RaftSettings defaults() {
      return new RaftSettings(
          Duration.ofSeconds(1),
          100_000,
          8 << 20,
          1024,
          4096,
          32L << 20,
          Duration.ofSeconds(2),
          Duration.ofMillis(250));
    }

    /** The state machine's share of these settings. */
    public io.shale.node.statemachine.StateMachineSettings stateMachine(long scanPageBytes) {
      return new io.shale.node.statemachine.StateMachineSettings(
          snapshotReloadWait, snapshotInstallSettle, checkpointLease, scanPageBytes);
    }
  }

  /**
   * Request limits; larger requests are INVALID_ARGUMENT naming the limit. The gRPC message size is
   * set from {@code maxValueBytes}, with room for the key and the envelope.
   */
  public record Limits(
      int maxKeyBytes,
      int maxValueBytes,
      long scanPageBytes,
      int maxBatchOps,
      int maxScanEntries,
      int deleteRangeChunkKeys,
      int maxInflightRequests,
      long maxInflightWriteBytes,
      int handlerThreads,
      boolean virtualHandlers,
      int maxTxnOps) {
    /** Key and value limits, with the other limits at their defaults. */
    public Limits(int maxKeyBytes, int maxValueBytes) {
      this(
          maxKeyBytes,
          maxValueBytes,
          4L << 20,
          10_000,
          10_000,
          10_000,
          1024,
          32L << 20,
          128,
          false,
          128);
    }

    public static Limits defaults() {
      return new Limits(64 << 10, 16 << 20);
    }

    /** The largest gRPC message a node accepts: one value, one key and 1 MiB of envelope. */
    public int maxMessageBytes() {
      return maxValueBytes + maxKeyBytes + (1 << 20);
    }
  }

  /** The keys of [node], [raft] and [limits], by table: every one is read and documented. */
  static final Map<String, List<String>> KEYS =
      Map.of(
          "node",
          List.of(
              "id",
              "cluster",
              "data_dir",
              "raft_address",
              "api_address",
              "http_address",
              "insecure"),
          "raft",
          List.of(
              "election_timeout",
              "snapshot_every_entries",
              "log_segment_size",
              "purge_gap",
              "pending_write_limit",
              "pending_write_bytes",
              "pressure_report_max_age",
              "pressure_max_delay",
              "pressure_poll_interval",
              "admin_timeout",
              "group_commit_threads",
              "group_commit_max_writes",
              "group_commit_max_bytes",
              "snapshot_reload_wait",
              "snapshot_install_settle",
              "checkpoint_lease",
              "follower_retry_max_wait",
              "snapshot_every_bytes",
              "follower_reads",
              "lease_reads",
              "log_keep_entries",
              "replication_batch_wait",
              "commit_update_delay"),
          "limits",
          List.of(
              "max_key_size",
              "max_value_size",
              "scan_page_size",
              "max_batch_ops",
              "max_scan_entries",
              "delete_range_chunk_keys",
              "max_inflight_requests",
              "max_inflight_write_bytes",
              "handler_threads",
              "virtual_handlers",
              "max_txn_ops"),
          "tls",
          List.of("ca_file", "cert_file", "key_file", "peer_common_name", "reload_interval"),
          "auth",
          List.of("token_ttl"),
          "audit",
          List.of("max_file_size", "max_files"),
          "watch",
          List.of("history_size", "progress_interval", "prev_values"),
          "lease",
          List.of("min_ttl", "max_ttl", "check_interval"),
          "memory",
          List.of("heap_headroom", "raft_log_cache", "raft_appends_in_flight"));

  /** Keys that were taken out, with what replaces them (a config that sets one is refused). */
  private static final Map<String, String> REMOVED_KEYS =
      Map.of(
          "memory.engine_metadata",
          "table indexes and Bloom filters live off the heap now, bounded by"
              + " lsm.index_and_filter_memory; delete memory.engine_metadata");

  private static final List<String> PEER_KEYS = List.of("id", "raft_address", "api_address");

  /**
   * Reads {@code file}, then applies {@code overrides} ("section.key=value", the value written as
   * it would be in the file but without quotes). Relative {@code data_dir}s are resolved against
   * the file's directory.
   */
  public static NodeConfig load(Path file, List<String> overrides) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read configuration: " + e, e);
    }
    try {
      Path base = file.toAbsolutePath().getParent();
      return parse(text, overrides, base);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Parses TOML text; relative paths are resolved against {@code base}. */
  public static NodeConfig parse(String text, List<String> overrides, Path base) {
    TomlParseResult toml = Toml.parse(text);
    if (toml.hasErrors()) {
      throw new IllegalArgumentException(
          "invalid TOML at "
              + toml.errors().get(0).position()
              + ": "
              + toml.errors().get(0).getMessage());
    }
    for (String table : toml.keySet()) {
      if (!KEYS.containsKey(table) && !table.equals("lsm") && !table.equals("peers")) {
        throw new IllegalArgumentException(
            "unknown configuration table ["
                + table
                + "] (known: [node], [[peers]], [raft], [limits], [tls], [auth], [audit], [watch], [lease], [lsm])");
      }
    }
    Values v = new Values(toml, overrides);
    String id = v.string("node.id", null);
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("node.id is required");
    }
    String raftAddress = v.address("node.raft_address", null);
    String apiAddress = v.address("node.api_address", null);
    String httpAddress = v.address("node.http_address", null);
    Path dataDir = base.resolve(v.string("node.data_dir", "data/" + id)).normalize();
    RaftSettings d = RaftSettings.defaults();
    RaftSettings raft =
        new RaftSettings(
            v.duration("raft.election_timeout", d.electionTimeout()),
            v.positive("raft.snapshot_every_entries", d.snapshotEveryEntries()),
            v.size("raft.log_segment_size", d.logSegmentSize()),
            v.positive("raft.purge_gap", d.purgeGap()),
            (int)
                Math.min(
                    Integer.MAX_VALUE,
                    v.positive("raft.pending_write_limit", d.pendingWriteLimit())),
            v.size("raft.pending_write_bytes", d.pendingWriteBytes()),
            v.duration("raft.pressure_report_max_age", d.pressureReportMaxAge()),
            v.duration("raft.pressure_poll_interval", d.pressurePollInterval()),
            v.duration("raft.admin_timeout", d.adminTimeout()),
            (int) v.between("raft.group_commit_threads", d.groupCommitThreads(), 1, 64),
            (int) v.between("raft.group_commit_max_writes", d.groupCommitMaxWrites(), 1, 65_536),
            v.size("raft.group_commit_max_bytes", d.groupCommitMaxBytes()),
            v.duration("raft.snapshot_reload_wait", d.snapshotReloadWait()),
            v.duration("raft.snapshot_install_settle", d.snapshotInstallSettle()),
            v.duration("raft.checkpoint_lease", d.checkpointLease()),
            v.duration("raft.pressure_max_delay", d.pressureMaxDelay()),
            v.duration("raft.follower_retry_max_wait", d.followerRetryMaxWait()),
            v.size("raft.snapshot_every_bytes", d.snapshotEveryBytes()),
            v.bool("raft.follower_reads", d.followerReads()),
            v.bool("raft.lease_reads", d.leaseReads()),
            v.between("raft.log_keep_entries", d.logKeepEntries(), 0, 1_000_000_000),
            v.duration("raft.replication_batch_wait", d.replicationBatchWait(), true),
            v.duration("raft.commit_update_delay", d.commitUpdateDelay(), true));
    Limits dl = Limits.defaults();
    long maxKey = v.size("limits.max_key_size", dl.maxKeyBytes());
    long maxValue = v.size("limits.max_value_size", dl.maxValueBytes());
    if (maxKey > (64 << 10)) {
      throw new IllegalArgumentException(
          "limits.max_key_size must be at most 64KiB, got " + maxKey);
    }
    if (maxValue > (256 << 20)) {
      throw new IllegalArgumentException(
          "limits.max_value_size must be at most 256MiB, got " + maxValue);
    }
    List<Peer> peers = peers(toml);
    if (peers.stream().noneMatch(p -> p.id().equals(id))) {
      throw new IllegalArgumentException(
          "node.id \""
              + id
              + "\" is not one of the peers "
              + peers.stream().map(Peer::id).toList());
    }
    if (raftAddress == null) {
      raftAddress =
          peers.stream()
              .filter(p -> p.id().equals(id))
              .map(Peer::raftAddress)
              .findFirst()
              .orElse(null);
    }
    if (apiAddress == null) {
      apiAddress =
          peers.stream()
              .filter(p -> p.id().equals(id))
              .map(Peer::apiAddress)
              .findFirst()
              .orElse(null);
    }
    if (raftAddress == null || apiAddress == null) {
      throw new IllegalArgumentException(
          "node.raft_address and node.api_address are required "
              + "(or a [[peers]] entry with id = \""
              + id
              + "\")");
    }
    EngineOptions engine = EngineConfig.parse(text, engineDefaults());
    return new NodeConfig(
        id,
        v.string("node.cluster", "shale"),
        dataDir,
        raftAddress,
        apiAddress,
        httpAddress,
        peers,
        raft,
        new Limits(
            (int) maxKey,
            (int) maxValue,
            v.size("limits.scan_page_size", dl.scanPageBytes()),
            (int)
                v.between("limits.max_batch_ops", dl.maxBatchOps(), 1, CommandCodec.MAX_BATCH_OPS),
            (int) v.between("limits.max_scan_entries", dl.maxScanEntries(), 1, 1_000_000),
            (int)
                v.between(
                    "limits.delete_range_chunk_keys",
                    dl.deleteRangeChunkKeys(),
                    1,
                    CommandCodec.MAX_DELETE_RANGE_KEYS),
            (int) v.between("limits.max_inflight_requests", dl.maxInflightRequests(), 1, 1_000_000),
            v.size("limits.max_inflight_write_bytes", dl.maxInflightWriteBytes()),
            (int) v.between("limits.handler_threads", dl.handlerThreads(), 1, 4096),
            v.bool("limits.virtual_handlers", dl.virtualHandlers()),
            (int) v.between("limits.max_txn_ops", dl.maxTxnOps(), 1, CommandCodec.MAX_TXN_PARTS)),
        engine,
        tls(v, base),
        v.duration("auth.token_ttl", DEFAULT_TOKEN_TTL),
        new Audit(
            v.size("audit.max_file_size", Audit.defaults().maxFileBytes()),
            (int) v.between("audit.max_files", Audit.defaults().maxFiles(), 1, 1000)),
        v.bool("node.insecure", false),
        new Watch(
            v.size("watch.history_size", Watch.defaults().historyBytes()),
            v.duration("watch.progress_interval", Watch.defaults().progressInterval()),
            v.bool("watch.prev_values", Watch.defaults().previousValues())),
        new Lease(
            v.duration("lease.min_ttl", Lease.defaults().minTtl()),
            v.duration("lease.max_ttl", Lease.defaults().maxTtl()),
            v.duration("lease.check_interval", Lease.defaults().checkInterval())),
        new Memory(
            v.fraction("memory.heap_headroom", Memory.defaults().heapHeadroom()),
            v.size("memory.raft_log_cache", Memory.defaults().raftLogCacheBytes()),
            (int)
                v.between(
                    "memory.raft_appends_in_flight",
                    Memory.defaults().raftAppendsInFlight(),
                    1,
                    128)));
  }

  /** The {@code [tls]} files: all three or none. */
  private static PeerTls.Files tls(Values v, Path base) {
    String ca = v.string("tls.ca_file", null);
    String cert = v.string("tls.cert_file", null);
    String key = v.string("tls.key_file", null);
    if (ca == null && cert == null && key == null) {
      return null;
    }
    if (ca == null || cert == null || key == null) {
      throw new IllegalArgumentException(
          "tls.ca_file, tls.cert_file and tls.key_file go together; set all three or none");
    }
    String peerName = v.string("tls.peer_common_name", PeerTls.DEFAULT_PEER_NAME);
    if (peerName.isBlank()) {
      throw new IllegalArgumentException("tls.peer_common_name must not be empty");
    }
    return new PeerTls.Files(
        base.resolve(ca).normalize(),
        base.resolve(cert).normalize(),
        base.resolve(key).normalize(),
        peerName,
        v.duration("tls.reload_interval", PeerTls.Files.DEFAULT_RELOAD_INTERVAL));
  }

  private static List<Peer> peers(TomlParseResult toml) {
    Object value = toml.get("peers");
    if (value == null) {
      throw new IllegalArgumentException(
          "[[peers]] is required: one entry per member, with id, "
              + "raft_address and api_address");
    }
    if (!(value instanceof TomlArray array)
        || array.isEmpty()
        || !array.toList().stream().allMatch(e -> e instanceof TomlTable)) {
      throw new IllegalArgumentException("peers must be an array of tables ([[peers]])");
    }
    List<Peer> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < array.size(); i++) {
      TomlTable t = array.getTable(i);
      String where = "peers[" + i + "]";
      for (String key : t.keySet()) {
        if (!PEER_KEYS.contains(key)) {
          throw new IllegalArgumentException(
              "unknown configuration key "
                  + where
                  + "."
                  + key
                  + " (known: "
                  + String.join(", ", PEER_KEYS)
                  + ")");
        }
      }
      String id = peerString(t, where, "id");
      if (!ids.add(id)) {
        throw new IllegalArgumentException(where + ".id \"" + id + "\" appears twice");
      }
      out.add(
          new Peer(
              id,
              checkAddress(where + ".raft_address", peerString(t, where, "raft_address")),
              checkAddress(where + ".api_address", peerString(t, where, "api_address"))));
    }
    return out;
  }

  private static String peerString(TomlTable t, String where, String key) {
    Object v = t.get(key);
    if (!(v instanceof String s) || s.isBlank()) {
      throw new IllegalArgumentException(where + "." + key + " must be a non-empty string");
    }
    return s;
  }

  private static final Pattern ADDRESS =
      Pattern.compile("([^:\\s]+|\\[[0-9a-fA-F:]+\\]):(\\d{1,5})");

  static String checkAddress(String key, String address) {
    Matcher m = ADDRESS.matcher(address);
    if (!m.matches() || Integer.parseInt(m.group(2)) > 65535) {
      throw new IllegalArgumentException(
          key + " must be HOST:PORT with a port of 0 to 65535, got \"" + address + "\"");
    }
    return address;
  }

  /** The port of a HOST:PORT address. */
  public static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
  }

  /** The host of a HOST:PORT address. */
  public static String host(String address) {
    String h = address.substring(0, address.lastIndexOf(':'));
    return h.startsWith("[") ? h.substring(1, h.length() - 1) : h;
  }

  private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");

  /** Values of the known sections, overrides first. */
  private static final class Values {
    private final TomlParseResult toml;
    private final Map<String, String> overrides = new LinkedHashMap<>();

    Values(TomlParseResult toml, List<String> overrideArgs) {
      this.toml = toml;
      for (String o : overrideArgs) {
        int eq = o.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException("an override is section.key=value, got \"" + o + "\"");
        }
        String key = o.substring(0, eq).trim();
        int dot = key.indexOf('.');
        List<String> known = dot < 0 ? null : KEYS.get(key.substring(0, dot));
        if (known == null || !known.contains(key.substring(dot + 1))) {
          throw new IllegalArgumentException(
              "unknown configuration key "
                  + key
                  + " in override \""
                  + o
                  + "\" (overridable: "
                  + knownKeys()
                  + ")");
        }
        overrides.put(key, o.substring(eq + 1).trim());
      }
      for (Map.Entry<String, List<String>> section : KEYS.entrySet()) {
        Object t = toml.get(section.getKey());
        if (t == null) {
          continue;
        }
        if (!(t instanceof TomlTable table)) {
          throw new IllegalArgumentException(section.getKey() + " must be a table");
        }
        for (String key : table.keySet()) {
          String removed = REMOVED_KEYS.get(section.getKey() + "." + key);
          if (removed != null) {
            throw new IllegalArgumentException(
                "configuration key " + section.getKey() + "." + key + " is gone: " + removed);
          }
          if (!section.getValue().contains(key)) {
            throw new IllegalArgumentException(
                "unknown configuration key "
                    + section.getKey()
                    + "."
                    + key
                    + " (known keys in ["
                    + section.getKey()
                    + "]: "
                    + String.join(", ", section.getValue())
                    + ")");
          }
        }
      }
    }

    private static String knownKeys() {
      List<String> all = new ArrayList<>();
      KEYS.forEach((s, keys) -> keys.forEach(k -> all.add(s + "." + k)));
      all.sort(null);
      return String.join(", ", all);
    }

    private Object raw(String key) {
      if (overrides.containsKey(key)) {
        return overrides.get(key);
      }
      return toml.get(key);
    }

    String string(String key, String fallback) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      if (!(o instanceof String s)) {
        throw new IllegalArgumentException(key + " must be a string, got " + o);
      }
      return s;
    }

    boolean bool(String key, boolean fallback) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      if (o instanceof Boolean b) {
        return b;
      }
      if (o instanceof String s && (s.equals("true") || s.equals("false"))) {
        return Boolean.parseBoolean(s);
      }
      throw new IllegalArgumentException(key + " must be true or false, got " + o);
    }

    String address(String key, String fallback) {
      String s = string(key, fallback);
      return s == null ? null : checkAddress(key, s);
    }

    long positive(String key, long fallback) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      long n;
      if (o instanceof Long l) {
        n = l;
      } else if (o instanceof String s) {
        try {
          n = Long.parseLong(s);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(key + " must be an integer, got \"" + s + "\"");
        }
      } else {
        throw new IllegalArgumentException(key + " must be an integer, got " + o);
      }
      if (n <= 0) {
        throw new IllegalArgumentException(key + " must be at least 1, got " + n);
      }
      return n;
    }

    /** An integer in {@code [min, max]}; the error names the key and the range. */
    long between(String key, long fallback, long min, long max) {
      long n = positive(key, fallback);
      if (n < min || n > max) {
        throw new IllegalArgumentException(
            key + " must be between " + min + " and " + max + ", got " + n);
      }
      return n;
    }

    /** A number in [0, 1] (TOML float, or a string in an override); the error names the key. */
    double fraction(String key, double fallback) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      double d;
      if (o instanceof Double x) {
        d = x;
      } else if (o instanceof String s) {
        try {
          d = Double.parseDouble(s);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(key + " must be a number, got \"" + s + "\"");
        }
      } else {
        throw new IllegalArgumentException(key + " must be a number such as 0.25, got " + o);
      }
      if (!(d >= 0 && d <= 1)) {
        throw new IllegalArgumentException(key + " must be between 0 and 1, got " + d);
      }
      return d;
    }

    long size(String key, long fallback) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      long n = o instanceof Long l ? l : ByteSize.parse(key, String.valueOf(o));
      if (n <= 0) {
        throw new IllegalArgumentException(key + " must be at least 1 byte, got " + n);
      }
      return n;
    }

    Duration duration(String key, Duration fallback) {
      return duration(key, fallback, false);
    }

    /** As {@link #duration(String, Duration)}, "0ms" accepted when {@code zeroAllowed}. */
    Duration duration(String key, Duration fallback, boolean zeroAllowed) {
      Object o = raw(key);
      if (o == null) {
        return fallback;
      }
      Matcher m = DURATION.matcher(String.valueOf(o).trim());
      if (!(o instanceof String) || !m.matches()) {
        throw new IllegalArgumentException(
            key + " must be a duration such as \"300ms\", \"2s\", \"1m\" or \"24h\", got " + o);
      }
      double n = Double.parseDouble(m.group(1));
      double unitNanos =
          switch (m.group(2)) {
            case "ms" -> 1e6;
            case "s" -> 1e9;
            case "m" -> 60e9;
            default -> 3600e9;
          };
      Duration d = Duration.ofNanos((long) (n * unitNanos));
      if (d.isZero() && !zeroAllowed) {
        throw new IllegalArgumentException(key + " must be longer than 0, got " + o);
      }
      return d;
    }
  }
}
