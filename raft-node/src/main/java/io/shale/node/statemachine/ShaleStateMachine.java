package io.shale.node.statemachine;

import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.VersionedValue;
import io.shale.engine.WriteBatch;
import io.shale.node.pressure.ReplicaPressure;
import io.shale.node.pressure.WriteThrottledByReplica;
import io.shale.node.snapshot.CheckpointStore;
import io.shale.node.snapshot.InstallHandoff;
import io.shale.node.snapshot.LeaderWatch;
import io.shale.node.snapshot.SnapshotFetcher;
import io.shale.node.snapshot.StagedInstall;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StaleReadException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachine;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;

/**
 * The Ratis state machine over one engine: the Raft log is the engine's write-ahead log.
 *
 * <ul>
 *   <li>Each committed command is applied as one engine batch tagged with its Raft index
 *       ({@link Engine#applyCommitted}); a compare-and-set is decided at apply time, so every
 *       replica decides it alike.</li>
 *   <li>The engine records, with each flush, the highest index whose effects are in its files; on
 *       restart that index (and its term) is reported as the latest snapshot and as the applied
 *       index, so Ratis replays only later entries. The term is kept in the engine under a
 *       reserved key (keys beginning with byte 0 are the node's), written in the batch of the
 *       first entry of every term, so the persisted state always holds the term of its index.</li>
 *   <li>Reads are answered from the applied state: {@link #query} behind Ratis's ReadIndex for
 *       linearizable reads, {@link #queryStale} for stale ones, which fails at once (instead of
 *       waiting, as the base class may) when this replica is behind the index asked for.</li>
 * </ul>
 *
 * <p>Snapshots: {@link #takeSnapshot} writes an engine checkpoint ({@link CheckpointStore}), after
 * which Ratis may purge the log up to its index. Ratis runs in notification mode: a follower
 * behind the leader's purged log is told so ({@link #notifyInstallSnapshotFromLeader}), fetches
 * the leader's checkpoint ({@link SnapshotFetcher}) and returns its index; Ratis then pauses the
 * state machine and reloads it, and {@link #reinitialize} swaps the fetched checkpoint in for the
 * engine directory ({@link StagedInstall}). One install runs at a time, from its fetch to the end
 * of its reload, and one that no leader's notification consumes is consumed on the current
 * leader's behalf ({@link InstallHandoff}).
 */
public final class ShaleStateMachine extends BaseStateMachine
    implements StateMachine.FollowerEventApi {
  /** Bytes of keys and values after which a scan page ends, whatever its entry limit. */
  static final long SCAN_PAGE_BYTES = 4L << 20;
  /** The engine key holding the term of the last applied entry (see the class comment). */
  static final byte[] TERM_KEY = {0, 't', 'e', 'r', 'm'};

  private final Path engineDir;
  private final EngineOptions options;
  private final MeterRegistry registry;
  private final CheckpointStore checkpoints;
  private final StagedInstall staged;
  private final ExecutorService installer;
  /** Checks once a second for a delivered install no leader consumes (see InstallHandoff). */
  private final ScheduledExecutorService handoffWatch;
  private volatile SnapshotFetcher.Result lastInstall;
  /** Where a fetched checkpoint is between its fetch and its reload. */
  private final InstallHandoff handoff = new InstallHandoff();
  /** Held by a reload from its start to its end, and by {@link #pause}, so neither interleaves. */
  private final Object reloading = new Object();
  /** Leaders elected, so that a fetch can tell its requester was replaced meanwhile. */
  private final LeaderWatch leaders = new LeaderWatch();
  /** How long a delivered install may wait for a leader's notification (set at initialize). */
  private volatile Duration notificationWait = Duration.ofSeconds(4);
  private volatile Engine engine;
  /** Index at which each term's first applied entry is, to tell the term of any applied index. */
  private final ConcurrentSkipListMap<Long, Long> termStarts = new ConcurrentSkipListMap<>();
  private long lastTerm = -1;

  /**
   * A state machine over the engine in {@code dataDir/engine}, with its checkpoints in
   * {@code dataDir/checkpoints}; the engine's meters go to {@code registry}.
   */
  public ShaleStateMachine(Path dataDir, EngineOptions options, MeterRegistry registry)
      throws IOException {
    this.engineDir = dataDir.resolve("engine");
    this.options = options;
    this.registry = registry;
    this.checkpoints = new CheckpointStore(dataDir.resolve("checkpoints"));
    this.staged = new StagedInstall(engineDir);
    this.installer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "snapshot-install");
      t.setDaemon(true);
      return t;
    });
    this.handoffWatch = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "snapshot-handoff");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage)
      throws IOException {
    super.initialize(server, groupId, storage);
    getLifeCycle().startAndTransition(() -> {
      staged.recover(); // at start only: a fetch may be staging while a reload runs
      openEngine();
    });
    // A leader notifies a follower in install at least every heartbeat; two of the longest
    // election timeouts without one mean that none will come.
    Duration electionMax = Duration.ofMillis(
        RaftServerConfigKeys.Rpc.timeoutMax(server.getProperties()).toLong(TimeUnit.MILLISECONDS));
    notificationWait = Duration.ofSeconds(3).compareTo(electionMax.multipliedBy(2)) > 0
        ? Duration.ofSeconds(3) : electionMax.multipliedBy(2);
    handoffWatch.scheduleWithFixedDelay(this::consumeStrandedInstall, 1, 1, TimeUnit.SECONDS);
  }

  private void openEngine() throws IOException {
    Engine e = Engine.open(engineDir, options, registry);
    long index = e.persistedAppliedIndex();
    byte[] t = e.get(TERM_KEY);
    lastTerm = t == null ? -1 : ByteBuffer.wrap(t).getLong();
    termStarts.clear();
    boolean applied = index > 0 && lastTerm >= 0;
    if (applied) {
      termStarts.put(0L, lastTerm);
      // The snapshot Ratis learns of at start (getLatestSnapshot) is the engine as opened: after
      // an install or a crash the newest checkpoint may be older than what the engine holds, and
      // the Raft log may already be purged up to the engine's index.
      CheckpointStore.Checkpoint newest = checkpoints.newest();
      if (newest == null || newest.index() < index) {
        checkpoints.take(e, this::termOf);
      }
    }
    engine = e;
    if (applied) {
      // Last: whoever sees the new applied index finds the engine that holds it.
      updateLastAppliedTermIndex(lastTerm, index);
    }
  }

  private volatile ReplicaPressure pressure;

  /**
   * Makes {@link #startTransaction} apply the worst write pressure among the replicas to every
   * write before it enters the log: delay when DELAYED, refuse when STOPPED.
   */
  public void gateWritesOn(ReplicaPressure replicas) {
    this.pressure = replicas;
  }

  /**
   * The clean place to refuse a write: it never reaches the log, and the leader does not step
   * down (brief section 1). Runs on the leader only.
   */
  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    TransactionContext trx = super.startTransaction(request);
    ReplicaPressure replicas = pressure;
    if (replicas != null) {
      ReplicaPressure.Worst w = replicas.worst();
      switch (w.pressure().condition()) {
        case STOPPED -> trx.setException(new WriteThrottledByReplica(w.node(), w.pressure()));
        case DELAYED -> {
          try {
            Thread.sleep(Math.max(1, w.pressure().suggestedDelay().toMillis()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while delaying a write");
          }
        }
        default -> { }
      }
    }
    return trx;
  }

  private final List<Consumer<String>> leaderChangeListeners = new CopyOnWriteArrayList<>();

  /**
   * Runs {@code listener} with the new leader's id whenever this node learns of one. It runs on
   * Ratis's thread, inside the role change (when this node is the one elected, before its first
   * entry of the term is appended), so it must be quick and must not wait on Raft.
   */
  public void onLeaderChange(Consumer<String> listener) {
    leaderChangeListeners.add(listener);
  }

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
    leaders.elected(newLeader.toString());
    leaderChangeListeners.forEach(l -> l.accept(newLeader.toString()));
  }

  /** The engine, for node-level operations (stats, compaction, pressure); null while a snapshot
   * is being swapped in. */
  public Engine engine() {
    return engine;
  }

  /**
   * The newest checkpoint: the snapshot Ratis took last (or the one this node installed or
   * opened with, see {@link #openEngine}), not the engine's persisted index, which moves on with
   * every flush. A leader whose log starts right after its snapshot finds the term of the entry
   * before a follower's next index here; answering a later index made it miss, so it told a
   * follower that had just installed that snapshot to install it again, for ever (nemesis run 11,
   * 2026-12-01: "ALREADY_INSTALLED, current snapshot index: 9224", about 250 times a second).
   */
  @Override
  public SnapshotInfo getLatestSnapshot() {
    CheckpointStore.Checkpoint newest = checkpoints.newest();
    if (newest == null || newest.index() <= 0) {
      return null;
    }
    TermIndex ti = TermIndex.valueOf(newest.term(), newest.index());
    return new SnapshotInfo() {
      @Override
      public TermIndex getTermIndex() {
        return ti;
      }

      @Override
      public List<FileInfo> getFiles() {
        return List.of();
      }
    };
  }

  /**
   * Writes a checkpoint (flush, then hard links) and returns its index, which is applied and
   * whose effects the checkpoint holds; Ratis may then purge the log up to it.
   */
  @Override
  public long takeSnapshot() throws IOException {
    return takeCheckpoint().index();
  }

  /** A checkpoint of the current engine (the newest one if nothing was applied since). */
  public CheckpointStore.Checkpoint takeCheckpoint() throws IOException {
    return checkpoints.take(liveEngine(), this::termOf);
  }

  /** The checkpoints this node keeps, for the transfer service. */
  public CheckpointStore checkpoints() {
    return checkpoints;
  }

  /** What the last snapshot installed on this node transferred, or null if none was. */
  public SnapshotFetcher.Result lastInstall() {
    return lastInstall;
  }

  private long termOf(long index) {
    Map.Entry<Long, Long> t = termStarts.floorEntry(index);
    return t == null ? 0 : t.getValue();
  }

  private Engine liveEngine() {
    Engine e = engine;
    if (e == null) {
      throw new IllegalStateException("the engine of " + getId() + " is being replaced by an "
          + "installed snapshot; retry");
    }
    return e;
  }

  /**
   * Called on a follower whose log lags behind the leader's first available entry: fetches the
   * leader's checkpoint (at least the index before that entry) in the background. Ratis asks
   * again until the future completes, then pauses and reloads the state machine.
   */
  @Override
  public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(
      RaftProtos.RoleInfoProto roleInfo, TermIndex firstTermIndexInLog) {
    RaftProtos.RaftPeerProto leader = roleInfo.getFollowerInfo().getLeaderInfo().getId();
    String address = leader.getDataStreamAddress();
    long minIndex = firstTermIndexInLog.getIndex() - 1;
    String requester = leader.getId().toStringUtf8();
    LeaderWatch.Mark mark = leaders.mark(requester);
    return CompletableFuture.supplyAsync(() -> {
      // One install at a time, from its fetch to the end of its reload (InstallHandoff).
      try {
        if (!handoff.awaitNoReload(RELOAD_WAIT)) {
          throw new IllegalStateException("the reload of the last installed snapshot has not"
              + " ended after " + RELOAD_WAIT.toSeconds() + " s; install from " + requester
              + " not started");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted before fetching a snapshot", e);
      }
      TermIndex pending = handoff.deliveredNotReloaded();
      if (pending != null && pending.getIndex() >= minIndex) {
        return pending; // fetched already, and Ratis asks again before it reloaded it
      }
      if (address.isEmpty()) {
        throw new IllegalStateException("leader " + requester
            + " has no client address to fetch a snapshot from");
      }
      // Operators (and the nemesis tests) see an install start, not only its end.
      System.err.println("shale: " + getId() + " installing a snapshot: fetching the checkpoint"
          + " at index " + minIndex + " or later from " + address);
      SnapshotFetcher.Result r;
      try {
        r = SnapshotFetcher.fetch(address, minIndex, getId().toString(), engineDir, staged);
      } catch (IOException | RuntimeException e) { // gRPC's failures are unchecked
        countFetch("failed");
        throw e instanceof IOException io ? new java.io.UncheckedIOException(io)
            : (RuntimeException) e;
      }
      try {
        if (r.index() < 0) {
          // The leader's newest checkpoint is empty, so it purged nothing (Ratis purges only up
          // to a snapshot of index 0 or more) and its log holds every entry.
          // Answered "no snapshot" (null), Ratis has the leader send them. A checkpoint of index
          // -1 handed to Ratis instead is never reloaded (it reloads only a non-negative index)
          // and the follower answers "install in progress" for good: a member added to a
          // cluster before its first write never caught up, and the staging blocked every other
          // membership change (ClusterServiceTest.aMemberAddedBeforeAnyWriteJoins).
          staged.discard();
          countFetch("nothing_to_install");
          System.err.println("shale: " + getId() + ": " + requester + "'s checkpoint holds "
              + "nothing applied; no snapshot to install, its log holds every entry");
          return null;
        }
        if (leaders.replacedSince(mark)) {
          // Ratis would wait for the next notification of a leader that no longer leads.
          countFetch("dropped_leader_changed");
          staged.discard();
          String why = "the snapshot fetched from " + requester + " (index " + r.index()
              + ") is dropped: " + leaders.leader() + " was elected leader during the fetch,"
              + " and will send its entries or ask for an install itself";
          System.err.println("shale: " + getId() + ": " + why);
          throw new IllegalStateException(why);
        }
        lastInstall = r;
        TermIndex fetched = TermIndex.valueOf(r.term(), r.index());
        handoff.delivered(fetched, requester);
        countFetch("delivered");
        System.err.println("shale: " + getId() + " fetched snapshot " + r.index() + " from "
            + address + ": " + r.filesFetched() + " files (" + r.bytesFetched() + " bytes) sent, "
            + r.filesReused() + " (" + r.bytesReused() + " bytes) already here");
        return fetched;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }, installer);
  }

  /**
   * Counts a snapshot fetch by how it ended ({@code shale.snapshot.fetches{outcome}}): an
   * operator sees installs, and installs dropped for a leader change, without reading logs.
   * An install refused before its fetch (a reload still running, no leader address) is not a
   * fetch and is not counted.
   */
  private void countFetch(String outcome) {
    registry.counter("shale.snapshot.fetches", "outcome", outcome).increment();
  }

  /** How long a fetch waits for the reload of the install before it. */
  private static final Duration RELOAD_WAIT = Duration.ofSeconds(60);

  /**
   * Consumes, on the current leader's behalf, an install delivered to Ratis that no leader's
   * notification consumed within {@link #notificationWait}: Ratis reloads a fetched snapshot
   * only on a notification, and refuses appends until then, but a leader elected after the
   * fetch ended, whose log still holds this follower's next entry, never sends one (nemesis run
   * 19: n3 refused n2's appends 3,857 times). The notification is the one Ratis waits for, given
   * to this server's own install-snapshot handler with the current leader and term; any leader's
   * notification would reload the install alike, and one of a stale term is refused.
   */
  private void consumeStrandedInstall() {
    try {
      TermIndex install = handoff.unconsumedFor(notificationWait);
      RaftServer server = getServer().getNow(null);
      if (install == null || server == null) {
        return;
      }
      DivisionInfo info = server.getDivision(getGroupId()).getInfo();
      // Term, leader, term: a leader read in one term must not be paired with the next one
      // (Ratis clears the leader after it moves the term on), which would make this follower
      // recognize it in a term it does not lead.
      long term = info.getCurrentTerm();
      RaftPeerId leader = info.getLeaderId();
      if (leader == null || leader.equals(getId()) || info.getCurrentTerm() != term) {
        return; // no leader to act for now: the next round looks again
      }
      RaftProtos.InstallSnapshotRequestProto notification =
          RaftProtos.InstallSnapshotRequestProto.newBuilder()
              .setServerRequest(RaftProtos.RaftRpcRequestProto.newBuilder()
                  .setRequestorId(leader.toByteString()).setReplyId(getId().toByteString())
                  .setRaftGroupId(RaftProtos.RaftGroupIdProto.newBuilder()
                      .setId(getGroupId().toByteString()))
                  .setCallId(install.getIndex()))
              .setLeaderTerm(term)
              .setNotification(RaftProtos.InstallSnapshotRequestProto.NotificationProto
                  .newBuilder().setFirstAvailableTermIndex(RaftProtos.TermIndexProto.newBuilder()
                      .setTerm(install.getTerm()).setIndex(install.getIndex() + 1)))
              .build();
      String requester = handoff.requester();
      RaftProtos.InstallSnapshotResult result = server.installSnapshot(notification).getResult();
      if (result == RaftProtos.InstallSnapshotResult.ALREADY_INSTALLED) {
        handoff.alreadyInPlace();
      }
      registry.counter("shale.snapshot.stranded.installs", "result", result.name()).increment();
      System.err.println("shale: " + getId() + ": snapshot " + install.getIndex() + " fetched"
          + " for " + requester + " waited " + notificationWait.toSeconds() + " s for a"
          + " notification that did not come; " + leader + "'s (term " + term + ") given to"
          + " this server: " + result);
    } catch (Exception e) {
      // The next round tries again (for example after the term changed under this one).
      System.err.println("shale: " + getId() + ": could not consume a stranded snapshot"
          + " install: " + e);
    }
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    long index = entry.getIndex();
    long term = entry.getTerm();
    Engine e = liveEngine();
    if (index <= e.lastAppliedIndex()) {
      // Already in the engine (replayed after a restart): never applied twice.
      updateLastAppliedTermIndex(term, index);
      return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(
          Reply.encode(new Reply.Written(index)))));
    }
    Command command;
    try {
      command = CommandCodec.decode(entry.getStateMachineLogEntry().getLogData().toByteArray());
    } catch (IllegalArgumentException bad) {
      // Deterministic on every replica: the entry is skipped and its writer told why.
      updateLastAppliedTermIndex(term, index);
      return CompletableFuture.failedFuture(bad);
    }
    WriteBatch batch = new WriteBatch();
    byte[] replyBytes;
    if (command instanceof Command.Group g) {
      // Client writes the leader grouped into one entry: applied in order, in one engine batch.
      List<byte[]> replies = new ArrayList<>(g.commands().size());
      Map<ByteBuffer, byte[]> idsInEntry = new HashMap<>();
      for (Command c : g.commands()) {
        replies.add(applyOne(e, c, index, batch, idsInEntry));
      }
      replyBytes = Reply.encode(new Reply.Many(index, replies));
    } else {
      replyBytes = applyOne(e, command, index, batch, null);
    }
    if (index % RequestRecords.EXPIRY_EVERY == 0) {
      RequestRecords.expire(e, batch, index);
    }
    if (term != lastTerm) {
      batch.put(TERM_KEY, ByteBuffer.allocate(8).putLong(term).array());
      termStarts.put(index, term);
      lastTerm = term;
    }
    if (!batch.isEmpty()) {
      e.applyCommitted(batch, index);
    }
    updateLastAppliedTermIndex(term, index);
    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(replyBytes)));
  }

  /**
   * Adds the effects of one command at {@code index} to {@code batch} and returns its encoded
   * reply. A request id already applied (in the engine, or earlier in this entry:
   * {@code idsInEntry}, null for an entry of one command) gets its first reply and adds nothing.
   */
  private static byte[] applyOne(Engine e, Command command, long index, WriteBatch batch,
      Map<ByteBuffer, byte[]> idsInEntry) {
    byte[] requestId = null;
    if (command instanceof Command.Identified id) {
      requestId = id.requestId();
      byte[] sameEntry = idsInEntry == null ? null : idsInEntry.get(ByteBuffer.wrap(requestId));
      if (sameEntry != null) {
        return sameEntry;
      }
      byte[] earlier = e.get(RequestRecords.lookupKey(requestId));
      if (earlier != null && RequestRecords.stillRetained(earlier, index)) {
        return RequestRecords.reply(earlier); // a retry: the first attempt's reply
      }
      command = id.command();
    }
    Reply reply;
    if (command instanceof Command.Batch b) {
      for (Command.Op op : b.ops()) {
        add(batch, op);
      }
      reply = new Reply.Written(index);
    } else if (command instanceof Command.DeleteRange r) {
      try (ScanIterator it = e.scan(new ScanOptions(r.start(), r.end(), Long.MAX_VALUE, false,
          true))) {
        while (it.next()) {
          if (it.key().length > 0 && it.key()[0] != 0) { // never the node's own records
            batch.delete(it.key());
          }
        }
      }
      reply = new Reply.Written(index);
    } else {
      Command.CompareAndSet cas = (Command.CompareAndSet) command;
      VersionedValue current = e.getVersioned(cas.key());
      long currentIndex = current == null ? 0 : current.index();
      boolean matches = cas.comparesIndex() ? currentIndex == cas.expectedIndex()
          : Arrays.equals(current == null ? null : current.value(), cas.expected());
      if (matches) {
        add(batch, cas.then());
        boolean deleted = cas.then().isDelete();
        reply = new Reply.CasResult(index, true, cas.then().value(), deleted ? 0 : index);
      } else {
        reply = new Reply.CasResult(index, false, current == null ? null : current.value(),
            currentIndex);
      }
    }
    byte[] bytes = Reply.encode(reply);
    if (requestId != null) {
      RequestRecords.record(batch, requestId, index, bytes);
      if (idsInEntry != null) {
        idsInEntry.put(ByteBuffer.wrap(requestId), bytes);
      }
    }
    return bytes;
  }

  private static void add(WriteBatch batch, Command.Op op) {
    if (op.isDelete()) {
      batch.delete(op.key());
    } else {
      batch.put(op.key(), op.value());
    }
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    try {
      Query q = Query.decode(request.getContent().toByteArray());
      return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(
          Reply.encode(answer(q)))));
    } catch (RuntimeException ex) {
      return CompletableFuture.failedFuture(ex);
    }
  }

  private Reply answer(Query q) {
    Engine e = liveEngine();
    long applied = getLastAppliedTermIndex().getIndex();
    if (q instanceof Query.Get g) {
      VersionedValue v = e.getVersioned(CommandCodec.checkKey(g.key()));
      return v == null ? new Reply.Value(applied, null, 0)
          : new Reply.Value(applied, v.value(), v.index());
    }
    if (q instanceof Query.Pressure) {
      return new Reply.Pressure(applied, e.writePressure());
    }
    Query.Scan s = (Query.Scan) q;
    List<byte[][]> out = new ArrayList<>();
    boolean more = false;
    long bytes = 0;
    ScanOptions o = new ScanOptions(s.start(), s.end(), (long) s.limit() + 1, s.reverse(),
        s.keysOnly());
    try (ScanIterator it = e.scan(o)) {
      while (it.next()) {
        if (it.key().length > 0 && it.key()[0] == 0) {
          continue; // the node's own records
        }
        // A page ends at its entry limit or, whatever the limit, past SCAN_PAGE_BYTES (so that
        // a page of large values still fits a gRPC message); the client continues after it.
        if (out.size() == s.limit() || (bytes >= SCAN_PAGE_BYTES && !out.isEmpty())) {
          more = true;
          break;
        }
        byte[] value = s.keysOnly() ? new byte[0] : it.value();
        bytes += it.key().length + value.length;
        out.add(new byte[][] {it.key(), value});
      }
    }
    return new Reply.Entries(applied, out, more);
  }

  @Override
  public CompletableFuture<Message> queryStale(Message request, long minIndex) {
    long applied = getLastAppliedTermIndex().getIndex();
    if (applied < minIndex) {
      return CompletableFuture.failedFuture(new StaleReadException(getId() + " has applied "
          + applied + ", behind the index " + minIndex + " the read asks for"));
    }
    return query(request);
  }

  /**
   * Ratis pauses the state machine on its own thread before it reloads it; the engine stays open
   * until {@link #reinitialize}, which runs on the apply thread, so no apply can race the swap.
   * A reload still opening the engine is waited for (pausing it then failed and stranded an
   * install, nemesis run 31); one not begun yet serves this request too.
   */
  @Override
  public void pause() {
    synchronized (reloading) {
      LifeCycle lifeCycle = getLifeCycle();
      if (lifeCycle.getCurrentState().isPausingOrPaused()) {
        return;
      }
      lifeCycle.transition(LifeCycle.State.PAUSING);
      lifeCycle.transition(LifeCycle.State.PAUSED);
      handoff.reloadStarting();
    }
  }

  /** Swaps in a fetched checkpoint, if one is staged, and (re)opens the engine. */
  @Override
  public void reinitialize() throws IOException {
    synchronized (reloading) {
      try {
        closeEngine();
        staged.swap(); // no fetch runs now: each waits for the reload before it (InstallHandoff)
        getLifeCycle().startAndTransition(this::openEngine);
      } finally {
        handoff.reloaded();
      }
    }
  }

  private void closeEngine() throws IOException {
    Engine e = engine;
    engine = null;
    if (e != null) {
      e.close();
    }
  }

  @Override
  public void close() throws IOException {
    installer.shutdownNow();
    handoffWatch.shutdownNow();
    closeEngine();
    super.close();
  }
}
