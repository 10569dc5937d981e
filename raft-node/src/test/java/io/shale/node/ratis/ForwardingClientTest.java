package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.local.LocalCluster;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Messages;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write whose retries run out while a majority is down closes a Ratis client's ordered stream for
 * good; the forwarding client starts over, so writes go through again once a majority is back.
 */
class ForwardingClientTest {
  @TempDir Path dir;

  private static Message put(String key) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    return Messages.of(CommandCodec.encode(new Command.Batch(List.of(new Command.Op(k, k)))));
  }

  /** A client that gives up after a few quick retries, so that the test need not wait long. */
  private static RaftClient impatient(LocalCluster cluster) {
    return cluster
        .transport()
        .client()
        .setRaftGroup(cluster.group())
        .setRetryPolicy(
            RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                5, TimeDuration.valueOf(50, TimeUnit.MILLISECONDS)))
        .build();
  }

  /** What {@code f} failed with; fails the test if it succeeded. */
  private static Throwable failureOf(CompletableFuture<RaftClientReply> f) throws Exception {
    try {
      RaftClientReply r = f.get(60, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure, got " + r);
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  @Test
  void writesGoThroughAgainAfterTheRetriesOfOneRanOutWhileAMajorityWasDown() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3);
        RaftClient plain = impatient(cluster);
        ForwardingClient forwarding = new ForwardingClient(() -> impatient(cluster))) {
      cluster.leader();
      assertThat(plain.async().send(put("a")).get(60, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(forwarding.send(put("a")).get(60, TimeUnit.SECONDS).isSuccess()).isTrue();

      List<String> stopped = cluster.running().subList(1, 3);
      for (String id : stopped) {
        cluster.stop(id);
      }
      // Both clients use up their retries: no leader can commit with one node of three.
      assertThat(failureOf(plain.async().send(put("b")))).isNotNull();
      assertThat(failureOf(forwarding.send(put("b")))).isNotNull();

      for (String id : stopped) {
        cluster.start(id);
      }
      cluster.leader();

      // Ratis's own client stays closed however long the cluster has been back.
      assertThat(failureOf(plain.async().send(put("c"))))
          .isInstanceOf(AlreadyClosedException.class);

      // The forwarding client went on with a fresh one: a write commits within the deadline.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      boolean committed = false;
      while (!committed && System.nanoTime() < deadline) {
        try {
          committed = forwarding.send(put("c")).get(30, TimeUnit.SECONDS).isSuccess();
        } catch (ExecutionException retryAfterAClosedStream) {
          // the request that met the closed stream fails; the next one uses the fresh client
        }
      }
      assertThat(committed).as("a write commits through the forwarding client").isTrue();
      assertThat(forwarding.renewals()).isGreaterThanOrEqualTo(1);
    }
  }
}
