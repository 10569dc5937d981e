package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.local.LocalCluster;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node is ready ({@code /ready}, the "ready" line) only once caught up with the leader: a
 * follower restarted behind thousands of entries is not ready while it is still receiving them,
 * although its own commit index (which never passes the end of its own log) says otherwise after
 * the first append.
 */
class ReadinessTest {
  @TempDir Path dir;

  @Test
  void aRestartedFollowerIsReadyOnlyOnceCaughtUpWithTheLeader() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3)) {
      String leader = cluster.leader();
      String follower =
          cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
      cluster.stop(follower);
      byte[] value = new byte[4096];
      try (RaftClient client = cluster.client()) {
        List<CompletableFuture<RaftClientReply>> sent = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
          byte[] key = ("backlog/" + i).getBytes(StandardCharsets.UTF_8);
          sent.add(
              client
                  .async()
                  .send(
                      Message.valueOf(
                          ByteString.copyFrom(
                              CommandCodec.encode(
                                  new Command.Batch(List.of(new Command.Op(key, value))))))));
        }
        for (CompletableFuture<RaftClientReply> f : sent) {
          assertThat(f.get(60, TimeUnit.SECONDS).isSuccess()).isTrue();
        }
      }
      RaftServer.Division atLeader =
          cluster.node(leader).server().getDivision(cluster.group().getGroupId());
      long target = atLeader.getRaftLog().getLastCommittedIndex();

      ShaleNode restarted = cluster.start(follower);
      RaftServer.Division d = restarted.server().getDivision(cluster.group().getGroupId());
      List<String> reasons = new ArrayList<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String why;
      while ((why = restarted.notReadyReason()) != null) {
        if (reasons.isEmpty() || !reasons.get(reasons.size() - 1).equals(kind(why))) {
          reasons.add(kind(why));
        }
        assertThat(System.nanoTime()).as("ready within 60 s; last: %s", why).isLessThan(deadline);
        Thread.sleep(1);
      }
      assertThat(d.getInfo().getLastAppliedIndex())
          .as("applied index when ready (reasons before: %s)", reasons)
          .isGreaterThanOrEqualTo(target);
      // It was seen behind, with the leader's figure: the window this test is about was there.
      assertThat(reasons).contains("applied index # behind the leader's commit index #");
    }
  }

  /** The reason without its numbers, to list the states the node went through. */
  private static String kind(String why) {
    return why.replaceAll("[0-9]+", "#");
  }
}
