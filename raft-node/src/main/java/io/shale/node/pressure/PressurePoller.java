package io.shale.node.pressure;

import io.shale.engine.pressure.WritePressure;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;

/**
 * Asks every other node of the group for its engine's write pressure every {@code interval}
 * (Ratis's heartbeats cannot carry it; a stale read served by the node's state machine can) and
 * hands the answers to {@link ReplicaPressure}. Every node polls, so that a new leader has fresh
 * reports at once. A node that does not answer is simply not reported.
 */
public final class PressurePoller implements AutoCloseable {
  private static final Message QUERY = Message.valueOf(
      org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(
          Query.encode(new Query.Pressure())));

  private final RaftClient client;
  private final ScheduledExecutorService timer;

  public PressurePoller(String self, RaftGroup group, RaftProperties properties,
      ReplicaPressure into, Duration interval) {
    this.client = RaftClient.newBuilder().setProperties(properties).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.noRetry()).build();
    // One thread per peer: a peer that does not answer (down, partitioned) must not delay the
    // reports of the others past their maximum age.
    this.timer = Executors.newScheduledThreadPool(Math.max(1, group.getPeers().size() - 1), r -> {
      Thread t = new Thread(r, "pressure-poller-" + self);
      t.setDaemon(true);
      return t;
    });
    for (RaftPeer peer : group.getPeers()) {
      if (peer.getId().toString().equals(self)) {
        continue;
      }
      timer.scheduleWithFixedDelay(() -> poll(peer, into), 0, interval.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /**
   * One blocking stale read (the asynchronous client closes its ordered window for a server after
   * a failure without retry, which would silence that peer for good).
   */
  private void poll(RaftPeer peer, ReplicaPressure into) {
    try {
      RaftClientReply r = client.io().sendStaleRead(QUERY, 0, peer.getId());
      if (r.isSuccess()) {
        WritePressure p = ((Reply.Pressure) Reply.decode(
            r.getMessage().getContent().toByteArray())).pressure();
        into.report(peer.getId().toString(), p);
      }
    } catch (IOException | RuntimeException e) {
      // not reported: its last report ages out
    }
  }

  @Override
  public void close() throws IOException {
    timer.shutdownNow();
    client.close();
  }
}
