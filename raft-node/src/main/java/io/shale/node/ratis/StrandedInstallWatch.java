package io.shale.node.ratis;

import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.node.snapshot.InstallHandoff;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Works around Ratis reloading a fetched snapshot only on a leader's next install notification
 * (docs/upstream/ratis-install-reload-waits-for-a-notification.md): a leader elected after the
 * fetch ended, whose log still holds this follower's next entry, never sends one, and the follower
 * refuses its appends for good. Once a second, an install delivered to Ratis and not consumed
 * within {@code notificationWait} is consumed on the current leader's behalf: the notification
 * Ratis waits for is given to this server's own install-snapshot handler, with the current leader
 * and term (one of a stale term is refused). Counted in {@code
 * shale.snapshot.stranded.installs{result}}. Shown by {@code InstallAcrossLeaderChangeTest}.
 */
public final class StrandedInstallWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StrandedInstallWatch.class);

  private final InstallHandoff handoff;
  private final MeterRegistry registry;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("snapshot-handoff"));
  private volatile Duration notificationWait = Duration.ofSeconds(4);

  public StrandedInstallWatch(InstallHandoff handoff, MeterRegistry registry) {
    this.handoff = handoff;
    this.registry = registry;
  }

  /**
   * Start watching. A leader notifies a follower in install at least every heartbeat, so {@code
   * notificationWait} of two of the longest election timeouts (at least 3 s) without one means that
   * none will come.
   */
  public void start(
      Supplier<RaftServer> server, RaftGroupId group, RaftPeerId self, Duration notificationWait) {
    this.notificationWait = notificationWait;
    timer.scheduleWithFixedDelay(() -> consume(server.get(), group, self), 1, 1, TimeUnit.SECONDS);
  }

  private void consume(RaftServer server, RaftGroupId group, RaftPeerId self) {
    try {
      TermIndex install = handoff.unconsumedFor(notificationWait);
      if (install == null || server == null) {
        return;
      }
      DivisionInfo info = server.getDivision(group).getInfo();
      // Term, leader, term: a leader read in one term must not be paired with the next one
      // (Ratis clears the leader after it moves the term on).
      long term = info.getCurrentTerm();
      RaftPeerId leader = info.getLeaderId();
      if (leader == null || leader.equals(self) || info.getCurrentTerm() != term) {
        return; // no leader to act for now: the next round looks again
      }
      RaftProtos.InstallSnapshotRequestProto notification =
          RaftProtos.InstallSnapshotRequestProto.newBuilder()
              .setServerRequest(
                  RaftProtos.RaftRpcRequestProto.newBuilder()
                      .setRequestorId(leader.toByteString())
                      .setReplyId(self.toByteString())
                      .setRaftGroupId(
                          RaftProtos.RaftGroupIdProto.newBuilder().setId(group.toByteString()))
                      .setCallId(install.getIndex()))
              .setLeaderTerm(term)
              .setNotification(
                  RaftProtos.InstallSnapshotRequestProto.NotificationProto.newBuilder()
                      .setFirstAvailableTermIndex(
                          RaftProtos.TermIndexProto.newBuilder()
                              .setTerm(install.getTerm())
                              .setIndex(install.getIndex() + 1)))
              .build();
      String requester = handoff.requester();
      RaftProtos.InstallSnapshotResult result = server.installSnapshot(notification).getResult();
      if (result == RaftProtos.InstallSnapshotResult.ALREADY_INSTALLED) {
        handoff.alreadyInPlace();
      }
      registry.counter("shale.snapshot.stranded.installs", "result", result.name()).increment();
      LOG.warn(
          "{}: snapshot {} fetched for {} waited {} s for a notification that did not come;"
              + " {}'s (term {}) given to this server: {}",
          self,
          install.getIndex(),
          requester,
          notificationWait.toSeconds(),
          leader,
          term,
          result);
    } catch (Exception e) {
      // The next round tries again (for example after the term changed under this one).
      LOG.warn("{}: could not consume a stranded snapshot install: {}", self, e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
