package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeMain;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
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
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private int starts;

  /** The output file of the child started last. */
  private Path childLog;

  /** Starts node {@code id} in its own JVM, its output in a file, and waits for its ready line. */
  private Process startChild(String id, Path config) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+ExitOnOutOfMemoryError",
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "--add-opens=java.base/java.io=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                NodeMain.class.getName(),
                "--config",
                config.toString()));
    childLog = dir.resolve(id + "-" + (++starts) + ".log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(childLog.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline && p.isAlive()) {
      if (childOutput().stream().anyMatch(l -> l.startsWith("ready " + id))) {
        return p;
      }
      Thread.sleep(50);
    }
    p.destroyForcibly();
    throw new AssertionError("child node " + id + " did not start: " + childOutput());
  }

  private List<String> childOutput() throws IOException {
    return Files.exists(childLog) ? Files.readAllLines(childLog) : List.of();
  }

  @Test
  void aKilledNodeRecoversAndHoldsEveryAcknowledgedWrite() throws Exception {
    // n1 and n2 in this JVM, n3 a child process started from its configuration file.
    Process child = null;
    try (LocalCluster cluster = LocalCluster.configuredOnly(dir, 3)) {
      cluster.start("n1");
      cluster.start("n2");
      Path n3 = cluster.writeConfigFile("n3");
      child = startChild("n3", n3);
      try (RaftClient client = cluster.client()) {
        long last = 0;
        int acknowledged = 0;
        for (int i = 0; i < 600; i++) {
          if (i == 200) {
            child.destroyForcibly().waitFor(); // SIGKILL, mid-stream
          }
          if (i == 400) {
            child = startChild("n3", n3);
          }
          RaftClientReply r =
              client
                  .io()
                  .send(
                      Message.valueOf(
                          ByteString.copyFrom(
                              CommandCodec.encode(
                                  new Command.Batch(
                                      List.of(new Command.Op(b("key" + i), b("value" + i))))))));
          assertThat(r.isSuccess()).isTrue();
          last = Reply.decode(r.getMessage().getContent().toByteArray()).appliedIndex();
          acknowledged++;
        }
        assertThat(acknowledged).isEqualTo(600);
        // n3 catches up to the last acknowledged index, then holds every key.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
          try {
            RaftClientReply r =
                client
                    .io()
                    .sendStaleRead(
                        Message.valueOf(
                            ByteString.copyFrom(Query.encode(new Query.Get(b("key599"))))),
                        last,
                        RaftPeerId.valueOf("n3"));
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
          RaftClientReply r =
              client
                  .io()
                  .sendStaleRead(
                      Message.valueOf(
                          ByteString.copyFrom(Query.encode(new Query.Get(b("key" + i))))),
                      last,
                      RaftPeerId.valueOf("n3"));
          assertThat(
                  ((Reply.Value) Reply.decode(r.getMessage().getContent().toByteArray())).value())
              .as("key%d on n3", i)
              .isEqualTo(b("value" + i));
        }
        // SIGTERM: the node shuts down gracefully (its shutdown hook closes the API, Raft and
        // the engine) and exits by itself; restarted, it still holds everything.
        child.destroy();
        assertThat(child.waitFor(20, TimeUnit.SECONDS)).as("n3 exits after SIGTERM").isTrue();
        assertThat(child.exitValue()).isEqualTo(143); // 128 + SIGTERM: the JVM's normal exit
        assertThat(childOutput()).anyMatch(l -> l.contains("n3 shutting down"));
        assertThat(childOutput()).noneMatch(l -> l.contains("closing node n3 failed"));
        child = startChild("n3", n3);
        RaftClientReply again =
            client
                .io()
                .sendStaleRead(
                    Message.valueOf(ByteString.copyFrom(Query.encode(new Query.Get(b("key599"))))),
                    last,
                    RaftPeerId.valueOf("n3"));
        assertThat(
                ((Reply.Value) Reply.decode(again.getMessage().getContent().toByteArray())).value())
            .isEqualTo(b("value599"));
      }
    } finally {
      if (child != null) {
        child.destroyForcibly();
      }
    }
  }
}
