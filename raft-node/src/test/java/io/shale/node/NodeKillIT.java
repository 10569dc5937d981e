package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.EngineOptions;
import io.shale.node.server.NodeMain;
import io.shale.node.server.ShaleNode;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node in its own process, killed with SIGKILL in the middle of a stream of writes and started
 * again on its directory: it recovers (engine and Raft log), catches up, and holds every write the
 * cluster acknowledged, each once.
 */
class NodeKillIT {
  @TempDir
  Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private Process startChild(String id, Map<String, String> peers) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dshale.cluster=kill-test", "-cp", System.getProperty("java.class.path"),
        NodeMain.class.getName(), id, dir.resolve(id).toString(), "0"));
    peers.forEach((k, v) -> cmd.add(k + "=" + v));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("ready " + id)) {
        Thread drain = new Thread(() -> {
          try {
            while (out.readLine() != null) {
              // keep the pipe from filling up
            }
          } catch (IOException e) {
            // the process is gone
          }
        });
        drain.setDaemon(true);
        drain.start();
        return p;
      }
      if (System.nanoTime() > deadline) {
        break;
      }
    }
    p.destroyForcibly();
    throw new AssertionError("child node " + id + " did not start");
  }

  @Test
  void aKilledNodeRecoversAndHoldsEveryAcknowledgedWrite() throws Exception {
    Map<String, String> peers = new LinkedHashMap<>();
    for (String id : List.of("n1", "n2", "n3")) {
      peers.put(id, "127.0.0.1:" + LocalCluster.freePort());
    }
    RaftGroup group = ShaleNode.group("kill-test", peers);
    var props = ShaleNode.properties(java.time.Duration.ofMillis(300));
    List<ShaleNode> inJvm = new ArrayList<>();
    Process child = null;
    try {
      for (String id : List.of("n1", "n2")) {
        inJvm.add(ShaleNode.start(id, group, dir.resolve(id), EngineOptions.defaults(), props));
      }
      child = startChild("n3", peers);
      try (RaftClient client = new LocalClusterClient(group, props).client()) {
        long last = 0;
        int acknowledged = 0;
        for (int i = 0; i < 600; i++) {
          if (i == 200) {
            child.destroyForcibly().waitFor(); // SIGKILL, mid-stream
          }
          if (i == 400) {
            child = startChild("n3", peers);
          }
          RaftClientReply r = client.io().send(Message.valueOf(ByteString.copyFrom(
              CommandCodec.encode(new Command.Batch(List.of(new Command.Op(b("key" + i),
                  b("value" + i))))))));
          assertThat(r.isSuccess()).isTrue();
          last = Reply.decode(r.getMessage().getContent().toByteArray()).appliedIndex();
          acknowledged++;
        }
        assertThat(acknowledged).isEqualTo(600);
        // n3 catches up to the last acknowledged index, then holds every key.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
          try {
            RaftClientReply r = client.io().sendStaleRead(Message.valueOf(ByteString.copyFrom(
                Query.encode(new Query.Get(b("key599"))))), last, RaftPeerId.valueOf("n3"));
            if (r.isSuccess()) {
              break;
            }
          } catch (IOException behind) {
            // StaleReadException while n3 has not yet committed the index asked for
          }
          assertThat(System.nanoTime()).as("n3 caught up within 60 s").isLessThan(deadline);
          Thread.sleep(100);
        }
        for (int i = 0; i < 600; i++) {
          RaftClientReply r = client.io().sendStaleRead(Message.valueOf(ByteString.copyFrom(
              Query.encode(new Query.Get(b("key" + i))))), last, RaftPeerId.valueOf("n3"));
          assertThat(((Reply.Value) Reply.decode(r.getMessage().getContent().toByteArray()))
              .value()).as("key%d on n3", i).isEqualTo(b("value" + i));
        }
      }
    } finally {
      if (child != null) {
        child.destroyForcibly();
      }
      for (ShaleNode n : inJvm) {
        n.close();
      }
    }
  }

  /** A Ratis client for a group (LocalCluster's, without starting nodes). */
  private record LocalClusterClient(RaftGroup group, org.apache.ratis.conf.RaftProperties props) {
    RaftClient client() {
      return RaftClient.newBuilder().setProperties(props).setRaftGroup(group)
          .setRetryPolicy(org.apache.ratis.retry.RetryPolicies.retryUpToMaximumCountWithFixedSleep(
              300, org.apache.ratis.util.TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
          .build();
    }
  }
}
