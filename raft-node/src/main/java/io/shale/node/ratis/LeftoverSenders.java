package io.shale.node.ratis;

import io.shale.engine.concurrent.DaemonThreads;
import java.io.IOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes this node step down when, as a new leader, it keeps sending its log to a peer that a
 * membership change removed: a sender left over from the configuration it was elected with.
 *
 * <p>How Ratis 3.3.0 leaves one: a new leader makes a log sender for every peer of its
 * configuration, the old members' too when the configuration is transitional (a change half done).
 * It drops the senders of removed peers only when it replicates the final configuration itself,
 * after the transitional one commits. A leader elected while the last configuration in its log is
 * the transitional one never does that: its first entry of the term is the final configuration
 * already. The removed peer's sender then runs for the whole term: every add of that peer fails in
 * Ratis ("Found duplicated element"), and an empty node started under its id to join again takes
 * those appends and shuts its Raft group down (RemovalAcrossLeaderChangeTest; docs/postmortems/15
 * and docs/upstream/ratis-leader-elected-mid-change-keeps-removed-sender.md).
 *
 * <p>Why stepping down mends it: a term's senders end with it, and the next leader (possibly this
 * node again) is elected with the final configuration, so it makes senders for its members only.
 * The price is one election, paid only after a removal that a leader change cut in two. The check
 * runs once per term, in the first moments after this node is elected: before its first entry is
 * applied no membership change can start, so a sender for a removed peer found then cannot be the
 * staging of that peer's new add.
 */
public final class LeftoverSenders implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeftoverSenders.class);

  /** How often, and for how long after an election, the check looks at the senders. */
  private static final long POLL_MS = 20;

  private static final long GIVE_UP_MS = 10_000;

  private final RaftServer server;
  private final RaftServer.Division division;
  private final ScheduledExecutorService timer;
  private final AtomicLong callIds = new AtomicLong();

  public LeftoverSenders(RaftServer server, RaftServer.Division division) {
    this.server = server;
    this.division = division;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named(division.getId() + "-leftover-senders"));
  }

  /**
   * Ratis reports {@code leaderId} elected. Runs inside Ratis's role change: when this node is the
   * one elected, its senders already exist and its configuration is still the one it was elected
   * with, so the peers only the old side of that configuration holds are noted here.
   */
  public void elected(String leaderId) {
    if (!division.getId().toString().equals(leaderId)) {
      return;
    }
    RaftConfiguration conf = division.getRaftConf();
    Set<String> removed = ids(conf.getPreviousPeers());
    removed.removeAll(ids(conf.getCurrentPeers()));
    if (removed.isEmpty()) {
      return;
    }
    long term = division.getInfo().getCurrentTerm();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GIVE_UP_MS);
    timer.execute(() -> check(term, removed, deadline));
  }

  /**
   * The peers of {@code removed} that a leader with configuration {@code conf} still sends to
   * ({@code senders}): empty while the configuration is transitional, when the old members' senders
   * are still needed.
   */
  static Set<String> leftovers(Set<String> senders, Set<String> removed, RaftConfiguration conf) {
    if (!conf.getPreviousPeers().isEmpty()) {
      return Set.of();
    }
    Set<String> left = new HashSet<>(senders);
    left.retainAll(removed);
    left.removeAll(ids(conf.getCurrentPeers()));
    left.removeAll(ids(conf.getCurrentPeers(RaftPeerRole.LISTENER)));
    return left;
  }

  private void check(long term, Set<String> removed, long deadline) {
    try {
      if (!division.getInfo().isLeader() || division.getInfo().getCurrentTerm() != term) {
        return;
      }
      RaftConfiguration conf = division.getRaftConf();
      if (!conf.getPreviousPeers().isEmpty()) {
        if (System.nanoTime() < deadline) {
          timer.schedule(() -> check(term, removed, deadline), POLL_MS, TimeUnit.MILLISECONDS);
        }
        return;
      }
      Set<String> left = leftovers(senders(), removed, conf);
      if (left.isEmpty()) {
        return;
      }
      LOG.warn(
          "{}: leader at term {} still sends its log to {}, removed from the configuration"
              + " it was elected with ({}); stepping down so the next leader starts without them",
          division.getMemberId(),
          term,
          left,
          conf);
      server
          .transferLeadershipAsync(
              new TransferLeadershipRequest(
                  ClientId.randomId(),
                  division.getId(),
                  division.getGroup().getGroupId(),
                  callIds.incrementAndGet(),
                  null,
                  5_000))
          .whenComplete(
              (reply, e) -> {
                if (e != null || !reply.isSuccess()) {
                  LOG.warn(
                      "{}: stepping down at term {} failed: {}",
                      division.getMemberId(),
                      term,
                      e != null ? e : reply.getException());
                }
              });
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: checking the senders at term {} failed", division.getMemberId(), term, e);
    }
  }

  private Set<String> senders() {
    Set<String> ids = new HashSet<>();
    division
        .getInfo()
        .getRoleInfoProto()
        .getLeaderInfo()
        .getFollowerInfoList()
        .forEach(f -> ids.add(f.getId().getId().toStringUtf8()));
    return ids;
  }

  private static Set<String> ids(Collection<RaftPeer> peers) {
    Set<String> ids = new HashSet<>();
    peers.forEach(p -> ids.add(p.getId().toString()));
    return ids;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
