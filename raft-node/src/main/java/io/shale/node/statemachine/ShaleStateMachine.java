package io.shale.node.statemachine;

import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.node.auth.AuthState;
import io.shale.node.pressure.WriteAdmission;
import io.shale.node.pressure.WriteThrottledByReplica;
import io.shale.node.ratis.StrandedInstallWatch;
import io.shale.node.snapshot.CheckpointStore;
import io.shale.node.snapshot.InstallHandoff;
import io.shale.node.snapshot.LeaderWatch;
import io.shale.node.snapshot.SnapshotFetcher;
import io.shale.node.snapshot.SnapshotInstaller;
import io.shale.node.snapshot.StagedInstall;
import io.shale.node.transport.PeerChannels;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StaleReadException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachine;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.LifeCycle;

/**
 * The Ratis state machine over one engine: the Raft log is the engine's write-ahead log. A thin
 * adapter: what a committed command does is {@link CommandApplier}'s, reads are {@link
 * QueryHandler}'s, terms {@link TermTracker}'s, write admission {@link WriteAdmission}'s, snapshot
 * installs {@link SnapshotInstaller}'s.
 *
 * <ul>
 *   <li>Each committed command is applied as one engine batch tagged with its Raft index ({@link
 *       Engine#applyCommitted}).
 *   <li>The engine records, with each flush, the highest index whose effects are in its files; on
 *       restart that index (and its term) is reported as the latest snapshot and as the applied
 *       index, so Ratis replays only later entries, and an entry at or below the engine's applied
 *       index is never applied twice.
 *   <li>Reads: {@link #query} behind Ratis's ReadIndex for linearizable reads, {@link #queryStale}
 *       for stale ones, which fails at once (instead of waiting, as the base class may) when this
 *       replica is behind the index asked for.
 * </ul>
 *
 * <p>Snapshots: {@link #takeSnapshot} writes an engine checkpoint ({@link CheckpointStore}). Ratis
 * runs in notification mode: a follower behind the leader's purged log is told so ({@link
 * #notifyInstallSnapshotFromLeader}) and fetches the leader's checkpoint; Ratis then pauses the
 * state machine and reloads it, and {@link #reinitialize} swaps the fetched checkpoint in for the
 * engine directory ({@link StagedInstall}).
 */
public final class ShaleStateMachine extends BaseStateMachine
    implements StateMachine.FollowerEventApi {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ShaleStateMachine.class);

  private final Path engineDir;
  private final EngineOptions options;
  private final MeterRegistry registry;
  private final CheckpointStore checkpoints;
  private final StagedInstall staged;

  /** Where a fetched checkpoint is between its fetch and its reload. */
  private final InstallHandoff handoff;

  /** Leaders elected, so that a fetch can tell its requester was replaced meanwhile. */
  private final LeaderWatch leaders = new LeaderWatch();

  private final SnapshotInstaller installer;
  private final StrandedInstallWatch strandedInstalls;

  /** Held by a reload from its start to its end, and by {@link #pause}, so neither interleaves. */
  private final Object reloading = new Object();

  private final CommandApplier applier = new CommandApplier();

  /**
   * Entries Ratis handed over that the engine already held (0 when the restart mechanism works:
   * Ratis starts after the engine's persisted index, reported as the latest snapshot).
   */
  private final AtomicLong alreadyApplied = new AtomicLong();

  private final QueryHandler queries;
  private final TermTracker terms = new TermTracker();
  private final List<Consumer<String>> leaderChangeListeners = new CopyOnWriteArrayList<>();
  private volatile WriteAdmission admission;
  private volatile AppliedChanges changes = AppliedChanges.NONE;
  private volatile AppliedLeases leases = AppliedLeases.NONE;
  private volatile Engine engine;
  private volatile AuthState auth = AuthState.EMPTY;
  private final AppliedWaits appliedWaits = new AppliedWaits();

  /**
   * A state machine over the engine in {@code dataDir/engine}, with its checkpoints in {@code
   * dataDir/checkpoints}; the engine's meters go to {@code registry}.
   */
  public ShaleStateMachine(Path dataDir, EngineOptions options, MeterRegistry registry)
      throws IOException {
    this(
        dataDir,
        options,
        registry,
        StateMachineSettings.defaults(),
        new PeerChannels(null, 4 << 20));
  }

  /**
   * @param peers channels to other nodes' Raft ports, where a follower fetches the leader's
   *     checkpoint
   */
  public ShaleStateMachine(
      Path dataDir,
      EngineOptions options,
      MeterRegistry registry,
      StateMachineSettings settings,
      PeerChannels peers)
      throws IOException {
    this.engineDir = dataDir.resolve("engine");
    this.options = options;
    this.registry = registry;
    this.checkpoints =
        new CheckpointStore(dataDir.resolve("checkpoints"), settings.checkpointLease());
    this.handoff = new InstallHandoff(settings.installSettle());
    this.queries = new QueryHandler(settings.scanPageBytes());
    this.staged = new StagedInstall(engineDir);
    this.installer =
        new SnapshotInstaller(
            () -> getId().toString(),
            engineDir,
            staged,
            peers,
            handoff,
            leaders,
            registry,
            settings.reloadWait());
    this.strandedInstalls = new StrandedInstallWatch(handoff, registry);
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage)
      throws IOException {
    super.initialize(server, groupId, storage);
    getLifeCycle()
        .startAndTransition(
            () -> {
              staged.recover(); // at start only: a fetch may be staging while a reload runs
              openEngine();
            });
    raiseTermToApplied(storage);
    Duration electionMax =
        Duration.ofMillis(
            RaftServerConfigKeys.Rpc.timeoutMax(server.getProperties())
                .toLong(TimeUnit.MILLISECONDS));
    Duration twoElections = electionMax.multipliedBy(2);
    Duration wait =
        Duration.ofSeconds(3).compareTo(twoElections) > 0 ? Duration.ofSeconds(3) : twoElections;
    strandedInstalls.start(() -> getServer().getNow(null), getGroupId(), getId(), wait);
  }

  /**
   * Raises the Raft term persisted in {@code storage} to the term of the last applied entry when it
   * is lower: only on a data directory restored from a backup, whose engine holds entries of term T
   * while Ratis starts a fresh log at term 0. Ratis would otherwise elect a leader of term 1 whose
   * first entry, (1, I + 1), sorts below the applied (T, I), and every replica would stop on it.
   * Raising a term and clearing the vote is what any Raft server does on seeing a newer term.
   */
  private void raiseTermToApplied(RaftStorage storage) throws IOException {
    TermIndex applied = getLastAppliedTermIndex();
    if (applied == null) {
      return;
    }
    var metadata = storage.getMetadataFile().getMetadata();
    if (metadata.getTerm() < applied.getTerm()) {
      LOG.info(
          "{}: Raft term {} is below the applied entry's {} (a restored backup): raised to it",
          getId(),
          metadata.getTerm(),
          applied.getTerm());
      storage
          .getMetadataFile()
          .persist(
              org.apache.ratis.server.storage.RaftStorageMetadata.valueOf(
                  applied.getTerm(), org.apache.ratis.protocol.RaftPeerId.valueOf("")));
    }
  }

  private void openEngine() throws IOException {
    Engine e = Engine.open(engineDir, options, registry);
    long index = e.persistedAppliedIndex();
    long term = terms.recover(e);
    boolean applied = index > 0 && term >= 0;
    if (applied) {
      // The snapshot Ratis learns of at start (getLatestSnapshot) is the engine as opened: after
      // an install or a crash the newest checkpoint may be older than what the engine holds, and
      // the Raft log may already be purged up to the engine's index.
      CheckpointStore.Checkpoint newest = checkpoints.newest();
      if (newest == null || newest.index() < index) {
        checkpoints.take(e, terms::termOf);
      }
    }
    auth = AuthState.load(e);
    applier.startFrom(e);
    leases.reload(e);
    engine = e;
    if (applied) {
      // Last: whoever sees the new applied index finds the engine that holds it.
      updateLastAppliedTermIndex(term, index);
    }
    changes.restartAfter(e.lastAppliedIndex());
  }

  /**
   * Tells {@code listener} of every change applied from now on, and of every (re)opening of the
   * engine; it learns at once where the applied state stands. Set it before the server starts.
   */
  public void publishChangesTo(AppliedChanges listener) {
    this.changes = listener;
    applier.capturePreviousValues(listener.previousValues());
    TermIndex applied = getLastAppliedTermIndex();
    listener.restartAfter(applied == null ? -1 : applied.getIndex());
  }

  /**
   * Tells {@code listener} what every entry applied from now on does to leases, and hands it the
   * engine's leases whenever the engine (re)opens. Set it before the server starts.
   */
  public void publishLeasesTo(AppliedLeases listener) {
    this.leases = listener;
    Engine e = engine;
    if (e != null) {
      listener.reload(e);
    }
  }

  /**
   * Makes {@link #startTransaction} refuse writes that {@code admission} refuses (this node's
   * engine STOPPED, or no quorum of replicas able to take writes). Delays are the API's to wait
   * out.
   */
  public void gateWritesOn(WriteAdmission admission) {
    this.admission = admission;
  }

  /** The clean place to refuse a write: it never reaches the log. Runs on the leader only. */
  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    TransactionContext trx = super.startTransaction(request);
    WriteAdmission a = admission;
    if (a != null) {
      WriteThrottledByReplica refused = a.decide().refusal();
      if (refused != null) {
        trx.setException(refused);
      }
    }
    return trx;
  }

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

  /** Entries handed over again that the engine already held, since this state machine started. */
  public long entriesAlreadyApplied() {
    return alreadyApplied.get();
  }

  /**
   * The engine, for node-level operations (stats, compaction, pressure); null while a snapshot is
   * being swapped in.
   */
  public Engine engine() {
    return engine;
  }

  /**
   * The newest checkpoint (the snapshot Ratis took last, or the one this node installed or opened
   * with), never the engine's persisted index, which moves on with every flush: a leader looks up
   * the term of the entry before a follower's next index here, and a later index made it miss and
   * ask a follower that had just installed this snapshot to install it again, for ever.
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
   * Writes a checkpoint of what the engine has already made durable (hard links) and returns its
   * index, which is applied and whose effects the checkpoint holds; Ratis may then purge the log up
   * to it. Ratis calls this on its applier thread, so it never waits for a flush (a full memtable
   * of large values takes half a second to write, and every write would wait behind it): the index
   * may lag the applied one by what the memtables hold, and the flush it asks for lets the next
   * snapshot catch up.
   */
  @Override
  public long takeSnapshot() throws IOException {
    return checkpoints.takeOfDurable(liveEngine(), terms::termOf).index();
  }

  /**
   * A checkpoint of the current engine, flushed first (the newest one if nothing was applied
   * since): what a snapshot transfer that needs everything applied so far asks for.
   */
  public CheckpointStore.Checkpoint takeCheckpoint() throws IOException {
    return checkpoints.take(liveEngine(), terms::termOf);
  }

  /** The checkpoints this node keeps, for the transfer service. */
  public CheckpointStore checkpoints() {
    return checkpoints;
  }

  /** What the last snapshot installed on this node transferred, or null if none was. */
  public SnapshotFetcher.Result lastInstall() {
    return installer.lastInstall();
  }

  private Engine liveEngine() {
    Engine e = engine;
    if (e == null) {
      throw new IllegalStateException(
          "the engine of " + getId() + " is being replaced by an " + "installed snapshot; retry");
    }
    return e;
  }

  /**
   * Called on a follower whose log lags behind the leader's first available entry: fetches the
   * leader's checkpoint (at least the index before that entry) in the background. Ratis asks again
   * until the future completes, then pauses and reloads the state machine.
   */
  @Override
  public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(
      RaftProtos.RoleInfoProto roleInfo, TermIndex firstTermIndexInLog) {
    RaftProtos.RaftPeerProto leader = roleInfo.getFollowerInfo().getLeaderInfo().getId();
    return installer.install(
        leader.getId().toStringUtf8(), leader.getAddress(), firstTermIndexInLog.getIndex() - 1);
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    long index = entry.getIndex();
    long term = entry.getTerm();
    Engine e = liveEngine();
    if (index <= e.lastAppliedIndex()) {
      // Already in the engine (replayed after a restart): never applied twice.
      alreadyApplied.incrementAndGet();
      updateLastAppliedTermIndex(term, index);
      return CompletableFuture.completedFuture(Messages.of(new Reply.Written(index)));
    }
    CommandApplier.Applied applied;
    boolean changesAuth = false;
    try {
      Command command =
          CommandCodec.decode(entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
      changesAuth = touchesAuth(command);
      applied = applier.apply(e, command, index);
    } catch (IllegalArgumentException bad) {
      // Deterministic on every replica: the entry applies nothing and its writer is told why.
      applied = CommandApplier.rejected(index, "malformed entry: " + bad.getMessage());
    }
    terms.onApply(term, index, applied.batch());
    if (!applied.batch().isEmpty()) {
      e.applyCommitted(applied.batch(), index);
      if (changesAuth) {
        auth = AuthState.load(e);
      }
    }
    updateLastAppliedTermIndex(term, index);
    appliedWaits.reached(index);
    changes.applied(index, applied.changes());
    if (!applied.leaseEvents().isEmpty()) {
      leases.applied(applied.leaseEvents());
    }
    return CompletableFuture.completedFuture(Messages.of(applied.reply()));
  }

  private static boolean touchesAuth(Command c) {
    return c instanceof Command.Auth
        || (c instanceof Command.Group g
            && g.commands().stream().anyMatch(Command.Auth.class::isInstance));
  }

  /** Completes once this replica has applied {@code index} (at once if it has). */
  public CompletableFuture<Void> applied(long index) {
    CompletableFuture<Void> f = appliedWaits.await(index);
    appliedWaits.reached(getLastAppliedTermIndex().getIndex());
    return f;
  }

  /** Users, roles and the token key as of the last applied entry. */
  public AuthState authState() {
    return auth;
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    try {
      Query q = Query.decode(request.getContent().toByteArray());
      long applied = getLastAppliedTermIndex().getIndex();
      Reply r = queries.answer(liveEngine(), applied, q);
      if (r instanceof Reply.LeaseInfo i && i.grantedTtlMillis() >= 0) {
        // Only the expiry clock knows the time left, and only on the leader.
        r =
            new Reply.LeaseInfo(
                i.appliedIndex(),
                i.id(),
                i.grantedTtlMillis(),
                leases.remainingMillis(i.id()),
                i.keys(),
                i.moreKeys());
      }
      return CompletableFuture.completedFuture(Messages.of(r));
    } catch (RuntimeException ex) {
      return CompletableFuture.failedFuture(ex);
    }
  }

  /** Fails at once when this replica is behind {@code minIndex} (the base class may wait). */
  @Override
  public CompletableFuture<Message> queryStale(Message request, long minIndex) {
    long applied = getLastAppliedTermIndex().getIndex();
    if (applied < minIndex) {
      return CompletableFuture.failedFuture(
          new StaleReadException(
              getId()
                  + " has applied "
                  + applied
                  + ", behind the index "
                  + minIndex
                  + " the read asks for"));
    }
    return query(request);
  }

  /**
   * Ratis pauses the state machine on its own thread before it reloads it; the engine stays open
   * until {@link #reinitialize}, which runs on the apply thread, so no apply can race the swap. A
   * reload still opening the engine is waited for; one not begun yet serves this request too
   * ({@code InstallAcrossLeaderChangeTest}).
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
    installer.close();
    strandedInstalls.close();
    closeEngine();
    super.close();
  }
}
