package io.shale.node.snapshot;

import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.node.transport.PeerChannels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's side of a snapshot install: fetches the leader's checkpoint into the staging
 * directory, in the background, and hands its term and index to Ratis, which then pauses and
 * reloads the state machine (the swap itself is {@link StagedInstall}'s).
 *
 * <p>Invariants: one install runs at a time, from its fetch to the end of its reload ({@link
 * InstallHandoff}); a checkpoint fetched from a leader replaced during the fetch is dropped ({@link
 * LeaderWatch}), since Ratis would wait for the next notification of a leader that no longer leads.
 * Each fetch is counted by outcome in {@code shale.snapshot.fetches{outcome}}.
 */
public final class SnapshotInstaller implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotInstaller.class);

  private final Supplier<String> self;
  private final Path engineDir;
  private final StagedInstall staged;
  private final InstallHandoff handoff;
  private final LeaderWatch leaders;
  private final MeterRegistry registry;
  private final PeerChannels peers;
  private final Duration reloadWait;
  private final ExecutorService installer =
      Executors.newSingleThreadExecutor(DaemonThreads.named("snapshot-install"));
  private volatile SnapshotFetcher.Result lastInstall;

  /**
   * @param self this server's id (known once Ratis initialized the state machine)
   * @param reloadWait how long a fetch waits for the reload of the install before it
   */
  public SnapshotInstaller(
      Supplier<String> self,
      Path engineDir,
      StagedInstall staged,
      PeerChannels peers,
      InstallHandoff handoff,
      LeaderWatch leaders,
      MeterRegistry registry,
      Duration reloadWait) {
    this.self = self;
    this.engineDir = engineDir;
    this.staged = staged;
    this.peers = peers;
    this.handoff = handoff;
    this.leaders = leaders;
    this.registry = registry;
    this.reloadWait = reloadWait;
  }

  /**
   * Fetch {@code requester}'s checkpoint at {@code minIndex} or later from {@code address}.
   * Completes with the fetched term and index, with null when the leader's checkpoint holds nothing
   * applied (then its log holds every entry and it sends them), or exceptionally.
   */
  public CompletableFuture<TermIndex> install(String requester, String address, long minIndex) {
    LeaderWatch.Mark mark = leaders.mark(requester);
    return CompletableFuture.supplyAsync(
        () -> fetch(requester, address, minIndex, mark), installer);
  }

  private TermIndex fetch(String requester, String address, long minIndex, LeaderWatch.Mark mark) {
    try {
      if (!handoff.awaitNoReload(reloadWait)) {
        throw new IllegalStateException(
            "the reload of the last installed snapshot has not"
                + " ended after "
                + reloadWait.toSeconds()
                + " s; install from "
                + requester
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
      throw new IllegalStateException(
          "leader " + requester + " has no Raft address to fetch a snapshot from");
    }
    LOG.info(
        "{} installing a snapshot: fetching the checkpoint at index {} or later from {}",
        self.get(),
        minIndex,
        address);
    SnapshotFetcher.Result r;
    try {
      r = SnapshotFetcher.fetch(peers, address, minIndex, self.get(), engineDir, staged);
    } catch (IOException | RuntimeException e) { // gRPC's failures are unchecked
      countFetch("failed");
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
    try {
      if (r.index() < 0) {
        // Ratis reloads only a non-negative index: handing it -1 would leave this follower "in
        // install" for good (ClusterServiceTest.aMemberAddedBeforeAnyWriteJoins).
        staged.discard();
        countFetch("nothing_to_install");
        LOG.info(
            "{}: {}'s checkpoint holds nothing applied; no snapshot to install, its log"
                + " holds every entry",
            self.get(),
            requester);
        return null;
      }
      if (leaders.replacedSince(mark)) {
        countFetch("dropped_leader_changed");
        staged.discard();
        String why =
            "the snapshot fetched from "
                + requester
                + " (index "
                + r.index()
                + ") is dropped: "
                + leaders.leader()
                + " was elected leader during the fetch,"
                + " and will send its entries or ask for an install itself";
        LOG.warn("{}: {}", self.get(), why);
        throw new IllegalStateException(why);
      }
      lastInstall = r;
      TermIndex fetched = TermIndex.valueOf(r.term(), r.index());
      handoff.delivered(fetched, requester);
      countFetch("delivered");
      LOG.info(
          "{} fetched snapshot {} from {}: {} files ({} bytes) sent, {} ({} bytes) already"
              + " here",
          self.get(),
          r.index(),
          address,
          r.filesFetched(),
          r.bytesFetched(),
          r.filesReused(),
          r.bytesReused());
      return fetched;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An install refused before its fetch (a reload still running, no address) is not counted. */
  private void countFetch(String outcome) {
    registry.counter("shale.snapshot.fetches", "outcome", outcome).increment();
  }

  /** What the last snapshot installed on this node transferred, or null if none was. */
  public SnapshotFetcher.Result lastInstall() {
    return lastInstall;
  }

  @Override
  public void close() {
    installer.shutdownNow();
  }
}
