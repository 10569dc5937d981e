package io.shale.ops.cluster;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.Member;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.PutRequest;
import io.shale.node.transport.NodeChannels;
import io.shale.ops.Directories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Three Shale nodes as child JVMs (io.shale.node.server.NodeMain, default configuration: the Raft
 * log fsyncs before an entry is acknowledged), driven through the KV gRPC API of the leader.
 */
final class ShaleTarget implements KvTarget {
  private final LocalProcesses processes = new LocalProcesses();
  private final Path dir;
  private final StubPool<KVGrpc.KVBlockingStub> stubs;
  private final List<Process> started = new ArrayList<>();
  private final String[] api = new String[3];
  private final String[] raft = new String[3];
  private final List<List<String>> commands = new ArrayList<>();
  private int restarts;

  ShaleTarget(Path dir, String heap, int channelCount) throws Exception {
    this.dir = dir;
    Directories.deleteRecursively(dir); // a run that was killed leaves its data behind
    Files.createDirectories(dir);
    String[] ids = {"n1", "n2", "n3"};
    StringBuilder peers = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      raft[i] = "127.0.0.1:" + LocalProcesses.freePort();
      api[i] = "127.0.0.1:" + LocalProcesses.freePort();
      peers
          .append("[[peers]]\nid = \"")
          .append(ids[i])
          .append("\"\nraft_address = \"")
          .append(raft[i])
          .append("\"\napi_address = \"")
          .append(api[i])
          .append("\"\n\n");
    }
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    for (int i = 0; i < 3; i++) {
      Path config = dir.resolve(ids[i] + ".toml");
      Files.writeString(
          config,
          "[node]\nid = \""
              + ids[i]
              + "\"\ncluster = \"bench\"\n"
              + "data_dir = \""
              + dir.resolve(ids[i])
              + "\"\n\n"
              + peers);
      List<String> command = new ArrayList<>(List.of(java, "-Xmx" + heap));
      String extra = System.getenv("SHALE_NODE_JAVA_OPTS"); // e.g. GC or diagnostics options
      if (extra != null && !extra.isBlank()) {
        command.addAll(List.of(extra.trim().split("\\s+")));
      }
      command.addAll(
          List.of(
              "-cp",
              System.getProperty("java.class.path"),
              "io.shale.node.server.NodeMain",
              "--config",
              config.toString()));
      String args = System.getenv("SHALE_NODE_ARGS"); // e.g. --set raft.key=value, for A/B runs
      if (args != null && !args.isBlank()) {
        command.addAll(List.of(args.trim().split("\\s+")));
      }
      commands.add(command);
      started.add(processes.start(command, dir.resolve(ids[i] + ".log")));
    }
    for (int i = 0; i < 3; i++) {
      LocalProcesses.awaitLine(
          started.get(i), dir.resolve(ids[i] + ".log"), l -> l.startsWith("ready "), 120);
    }
    String leader = leaderApiAddress(api[0]);
    stubs = new StubPool<>(leader, channelCount, KVGrpc::newBlockingStub);
  }

  /** The nodes' KV API addresses, n1 to n3. */
  List<String> apiAddresses() {
    return List.of(api);
  }

  /** The nodes' Raft addresses, n1 to n3. */
  List<String> raftAddresses() {
    return List.of(raft);
  }

  /** Whether every node process is still the one started (none died or was restarted). */
  boolean allAlive() {
    return started.stream().allMatch(Process::isAlive);
  }

  /** Kills node {@code i} (0 for n1) at once, as a crash would (SIGKILL), and waits for its end. */
  void kill(int i) throws InterruptedException {
    Process p = started.get(i);
    p.destroyForcibly();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("node n" + (i + 1) + " did not die within 30 s");
    }
  }

  /**
   * Starts node {@code i} again on its data directory, its output in a new log file, which is
   * returned; the process replaces the one {@link #allAlive} checks.
   */
  Path restart(int i) {
    Path log = dir.resolve("n" + (i + 1) + "-restart-" + (++restarts) + ".log");
    started.set(i, processes.start(commands.get(i), log));
    return log;
  }

  /** Node {@code i}'s process now. */
  Process process(int i) {
    return started.get(i);
  }

  /** Each node's peak resident memory (VmHWM, KiB) as Linux reports it; -1 where unknown. */
  List<Long> peakResidentKib() {
    List<Long> out = new ArrayList<>();
    for (Process p : started) {
      long kib = -1;
      try {
        for (String line :
            Files.readAllLines(Paths.get("/proc", Long.toString(p.pid()), "status"))) {
          if (line.startsWith("VmHWM:")) {
            kib = Long.parseLong(line.replaceAll("[^0-9]", ""));
          }
        }
      } catch (IOException | RuntimeException unknown) {
        // not Linux, or the process is gone
      }
      out.add(kib);
    }
    return out;
  }

  private static String leaderApiAddress(String any) throws InterruptedException {
    ManagedChannel ch = NodeChannels.open(any);
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline) {
        try {
          MembersResponse m =
              ClusterGrpc.newBlockingStub(ch)
                  .withDeadlineAfter(2, TimeUnit.SECONDS)
                  .listMembers(ListMembersRequest.getDefaultInstance());
          for (Member member : m.getMembersList()) {
            if (member.getId().equals(m.getLeaderId())) {
              return member.getApiAddress();
            }
          }
        } catch (RuntimeException notYet) {
          // no leader yet
        }
        Thread.sleep(200);
      }
      throw new IllegalStateException("the Shale cluster elected no leader within 60 s");
    } finally {
      ch.shutdownNow();
    }
  }

  private KVGrpc.KVBlockingStub stub() {
    return stubs.next();
  }

  @Override
  public void put(byte[] key, byte[] value) {
    stub()
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .put(
            PutRequest.newBuilder()
                .setKey(ByteString.copyFrom(key))
                .setValue(ByteString.copyFrom(value))
                .build());
  }

  @Override
  public int get(byte[] key) {
    GetResponse r =
        stub()
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .get(GetRequest.newBuilder().setKey(ByteString.copyFrom(key)).build());
    return r.getFound() ? r.getValue().size() : -1;
  }

  @Override
  public void close() {
    stubs.close();
    processes.close();
    try {
      Directories.deleteRecursively(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
