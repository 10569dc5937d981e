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
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "pressure-poller-" + self);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(() -> {
      for (RaftPeer peer : group.getPeers()) {
        if (peer.getId().toString().equals(self)) {
          continue;
        }
        client.async().sendStaleRead(QUERY, 0, peer.getId()).thenAccept(r -> {
          if (r.isSuccess()) {
            WritePressure p = ((Reply.Pressure) Reply.decode(
                r.getMessage().getContent().toByteArray())).pressure();
            into.report(peer.getId().toString(), p);
          }
        });
      }
    }, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() throws IOException {
    timer.shutdownNow();
    client.close();
  }
}
