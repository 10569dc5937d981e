package io.shale.node.pressure;

import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import io.shale.engine.pressure.WritePressure;
import io.shale.node.statemachine.Messages;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import io.shale.node.transport.RaftTransport;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks every other member for its engine's write pressure every {@code interval} (Ratis's
 * heartbeats cannot carry it; a stale read served by the member's state machine can) and hands the
 * answers to {@link ReplicaPressure}. Every node polls, so that a new leader has fresh reports at
 * once. The members are read from the current Raft configuration at every interval, so nodes added
 * or removed are polled or forgotten. A member that does not answer is not reported; its failures
 * are counted in {@code shale.pressure.poll.failures{node,peer}} and logged.
 */
public final class PressurePoller implements AutoCloseable {
  private static final Message QUERY = Messages.of(Query.encode(new Query.Pressure()));

  /** Members that may be unresponsive at once without delaying the others' reports. */
  private static final int THREADS = 8;

  /** One member's poll: its own client (a Ratis client knows a fixed set of peers). */
  private record Polled(RaftClient client, ScheduledFuture<?> task) {}

  private final String self;
  private final Supplier<Collection<RaftPeer>> members;
  private final RaftGroupId groupId;
  private final RaftTransport transport;
  private final ReplicaPressure into;
  private final long intervalMillis;
  private final ScheduledExecutorService timer;
  private final Map<String, Polled> polled = new ConcurrentHashMap<>();
  private final MeterRegistry registry;

  /** Failed polls in a row, by member: logged at the first, then every {@link #LOG_EVERY}. */
  private final Map<String, Integer> failuresInARow = new ConcurrentHashMap<>();

  private static final int LOG_EVERY = 100;
  private static final Logger LOG = LoggerFactory.getLogger(PressurePoller.class);

  public PressurePoller(
      String self,
      Supplier<Collection<RaftPeer>> members,
      RaftGroupId groupId,
      RaftTransport transport,
      ReplicaPressure into,
      Duration interval,
      MeterRegistry registry) {
    this.registry = registry;
    this.self = self;
    this.members = members;
    this.groupId = groupId;
    this.transport = transport;
    this.into = into;
    this.intervalMillis = interval.toMillis();
    this.timer =
        Executors.newScheduledThreadPool(THREADS, DaemonThreads.named("pressure-poller-" + self));
    timer.scheduleWithFixedDelay(this::followMembers, 0, intervalMillis, TimeUnit.MILLISECONDS);
  }

  /** Starts polling new members and stops polling removed ones. */
  private synchronized void followMembers() {
    try {
      Set<String> current = new HashSet<>();
      for (RaftPeer peer : members.get()) {
        String id = peer.getId().toString();
        if (id.equals(self)) {
          continue;
        }
        current.add(id);
        polled.computeIfAbsent(
            id,
            k -> {
              RaftClient client =
                  transport
                      .client()
                      .setRaftGroup(RaftGroup.valueOf(groupId, peer))
                      .setRetryPolicy(RetryPolicies.noRetry())
                      .build();
              return new Polled(
                  client,
                  timer.scheduleWithFixedDelay(
                      () -> poll(client, peer), 0, intervalMillis, TimeUnit.MILLISECONDS));
            });
      }
      for (String id : Set.copyOf(polled.keySet())) {
        if (!current.contains(id)) {
          stop(polled.remove(id));
          into.forget(id);
        }
      }
    } catch (RuntimeException e) {
      // the configuration could not be read (the server is closing): try at the next interval
    }
  }

  /**
   * One blocking stale read (the asynchronous client closes its ordered window for a server after a
   * failure without retry, which would silence that peer for good).
   */
  private void poll(RaftClient client, RaftPeer peer) {
    try {
      RaftClientReply r = client.io().sendStaleRead(QUERY, 0, peer.getId());
      if (!r.isSuccess()) {
        failed(peer, String.valueOf(r.getException()));
        return;
      }
      WritePressure p =
          ((Reply.Pressure) Reply.decode(r.getMessage().getContent().toByteArray())).pressure();
      into.report(peer.getId().toString(), p);
      Integer before = failuresInARow.remove(peer.getId().toString());
      if (before != null) {
        LOG.info("{} answers pressure polls again after {} failures", peer.getId(), before);
      }
    } catch (IOException | RuntimeException e) {
      failed(peer, e.toString()); // not reported: its last report ages out
    }
  }

  /** Counts a failed poll in {@code shale.pressure.poll.failures} and logs the first of a run. */
  private void failed(RaftPeer peer, String why) {
    String id = peer.getId().toString();
    registry.counter("shale.pressure.poll.failures", "node", self, "peer", id).increment();
    int n = failuresInARow.merge(id, 1, Integer::sum);
    if (n == 1 || n % LOG_EVERY == 0) {
      LOG.warn("pressure poll of {} failed ({} in a row): {}", id, n, why);
    }
  }

  private static void stop(Polled p) {
    p.task().cancel(true);
    try {
      p.client().close();
    } catch (IOException e) {
      // closing a client of a removed member; nothing depends on it
    }
  }

  @Override
  public synchronized void close() throws IOException {
    timer.shutdownNow();
    polled.values().forEach(PressurePoller::stop);
    polled.clear();
  }
}
