package io.shale.ops.cluster;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.GetResponse;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.Member;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.PutRequest;
import io.shale.node.transport.ClusterCertificates;
import io.shale.node.transport.NodeChannels;
import io.shale.ops.Directories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.net.ssl.SSLException;

/**
 * Three Shale nodes as child JVMs (io.shale.node.server.NodeMain, default configuration: the Raft
 * log fsyncs before an entry is acknowledged), driven through the KV gRPC API of the leader.
 */
final class ShaleTarget implements KvTarget {
  private final LocalProcesses processes = new LocalProcesses();
  private final Path dir;
  private final StubPool<KVGrpc.KVBlockingStub> stubs;
  private final StubPool<KVGrpc.KVBlockingStub> readStubs;
  private final List<Process> started = new ArrayList<>();
  private final String[] api = new String[3];
  private final String[] raft = new String[3];
  private final String[] http = new String[3];
  private final List<List<String>> commands = new ArrayList<>();
  private final long[] readyMillis = new long[3];
  private final Path certs;
  private int restarts;
  private int leaderIndex = -1;

  ShaleTarget(Path dir, String heap, int channelCount) throws Exception {
    this(dir, heap, channelCount, false);
  }

  /**
   * @param tls whether the nodes run with [tls] (and so check callers: the clients connect as the
   *     user root with its certificate) or insecure, as the plaintext etcd they are compared with
   */
  ShaleTarget(Path dir, String heap, int channelCount, boolean tls) throws Exception {
    this(dir, heap, channelCount, tls, NodeRuntime.configured(), i -> List.of());
  }

  /**
   * @param runtime the java, class path and options the nodes run on
   * @param nodeOptions more JVM options for node {@code i} (0 for n1)
   */
  ShaleTarget(
      Path dir,
      String heap,
      int channelCount,
      boolean tls,
      NodeRuntime runtime,
      java.util.function.IntFunction<List<String>> nodeOptions)
      throws Exception {
    this.dir = dir;
    Directories.deleteRecursively(dir); // a run that was killed leaves its data behind
    Files.createDirectories(dir);
    String[] ids = {"n1", "n2", "n3"};
    this.certs = dir.resolve("certs");
    String tlsSection = "";
    Function<String, ManagedChannel> open = hp -> NodeChannels.open(hp, 32 << 20);
    if (tls) {
      ClusterCertificates.ensure(
          certs,
          List.of(ids),
          List.of("root"),
          List.of("127.0.0.1", "localhost"),
          Duration.ofDays(1),
          false);
      open = hp -> tlsChannel(hp, certs);
    }
    StringBuilder peers = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      raft[i] = "127.0.0.1:" + LocalProcesses.freePort();
      api[i] = "127.0.0.1:" + LocalProcesses.freePort();
      http[i] = "127.0.0.1:" + LocalProcesses.freePort();
      peers
          .append("[[peers]]\nid = \"")
          .append(ids[i])
          .append("\"\nraft_address = \"")
          .append(raft[i])
          .append("\"\napi_address = \"")
          .append(api[i])
          .append("\"\n\n");
    }
    long launchedAt = System.nanoTime();
    for (int i = 0; i < 3; i++) {
      Path config = dir.resolve(ids[i] + ".toml");
      Files.writeString(
          config,
          "[node]\nid = \""
              + ids[i]
              + "\"\ncluster = \"bench\"\n"
              + (tls ? "" : "insecure = true\n")
              + "http_address = \""
              + http[i]
              + "\"\n"
              + "data_dir = \""
              + dir.resolve(ids[i])
              + "\"\n\n"
              + peers
              + (tls
                  ? "[tls]\nca_file = \""
                      + certs.resolve("ca.pem")
                      + "\"\ncert_file = \""
                      + certs.resolve(ids[i] + ".pem")
                      + "\"\nkey_file = \""
                      + certs.resolve(ids[i] + "-key.pem")
                      + "\"\n"
                  : ""));
      List<String> command =
          new ArrayList<>(
              List.of(
                  runtime.java(),
                  "-Xmx" + heap,
                  "-XX:G1HeapRegionSize=4m",
                  "-XX:+ExitOnOutOfMemoryError",
                  "--enable-native-access=ALL-UNNAMED",
                  "--sun-misc-unsafe-memory-access=allow",
                  "--add-opens=java.base/java.io=ALL-UNNAMED"));
      command.addAll(runtime.options());
      command.addAll(nodeOptions.apply(i));
      String extra = System.getenv("SHALE_NODE_JAVA_OPTS"); // e.g. GC or diagnostics options;
      if (extra != null && !extra.isBlank()) {
        // %i is the node's index, for options that name a file per node
        for (String option : extra.trim().split("\\s+")) {
          command.add(option.replace("%i", Integer.toString(i)));
        }
      }
      command.addAll(
          List.of(
              "-cp",
              runtime.classPath(),
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
      readyMillis[i] = (System.nanoTime() - launchedAt) / 1_000_000;
    }
    String leader = leaderApiAddress(open.apply(api[0]));
    leaderIndex = List.of(api).indexOf(leader);
    stubs = new StubPool<>(leader, channelCount, KVGrpc::newBlockingStub, open);
    // Reads spread over every node, as the SDK sends them by default.
    readStubs = new StubPool<>(List.of(api), channelCount, KVGrpc::newBlockingStub, open);
  }

  /**
   * Node {@code i}'s meters as its {@code /metrics} page shows them (Prometheus text), for the
   * benchmark's breakdown of where a put's time goes.
   */
  String metrics(int i) throws IOException, InterruptedException {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://" + http[i] + "/metrics"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  @Override
  public java.util.Map<String, Double> meters(int i) {
    try {
      return PutBreakdown.parse(metrics(i));
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The nodes' KV API addresses, n1 to n3. */
  List<String> apiAddresses() {
    return List.of(api);
  }

  @Override
  public List<Process> servers() {
    return List.copyOf(started);
  }

  /** The node the clients were pointed at, which led when the target started. */
  @Override
  public int leaderIndex() {
    return leaderIndex;
  }

  /** The nodes' Raft addresses, n1 to n3. */
  List<String> raftAddresses() {
    return List.of(raft);
  }

  /** Whether every node process is still the one started (none died or was restarted). */
  boolean allAlive() {
    return started.stream().allMatch(Process::isAlive);
  }

  /**
   * Milliseconds from launching the three JVMs until node {@code i} printed "ready" (serving,
   * caught up, a leader elected), polled every 20 ms.
   */
  long readyMillis(int i) {
    return readyMillis[i];
  }

  /** The cluster's CA and the root user's client certificate (when started with TLS). */
  Path certificates() {
    return certs;
  }

  /**
   * Stops node {@code i} politely (SIGTERM: the node closes and the JVM runs its exit, where a
   * training run writes its ahead-of-time cache) and waits up to {@code grace} for its end.
   */
  void stop(int i, Duration grace) throws InterruptedException {
    Process p = started.get(i);
    p.destroy();
    if (!p.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("node n" + (i + 1) + " did not end within " + grace);
    }
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

  /** Copies each node's log files to {@code keep}, for a failed run's reader. */
  void keepLogs(Path keep) throws IOException {
    Files.createDirectories(keep);
    try (var logs = Files.list(dir)) {
      for (Path log : logs.filter(f -> f.toString().endsWith(".log")).toList()) {
        Files.copy(
            log,
            keep.resolve(log.getFileName()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** Fails naming the node and line when any node's log (restarts included) holds {@code text}. */
  void assertNoNodeLogged(String text) throws IOException {
    try (var logs = Files.list(dir)) {
      for (Path log : logs.filter(f -> f.toString().endsWith(".log")).toList()) {
        for (String line : Files.readAllLines(log)) {
          if (line.contains(text)) {
            throw new AssertionError(log.getFileName() + " logged: " + line);
          }
        }
      }
    }
  }

  /** Node {@code i}'s HTTP address (host:port of /metrics). */
  String httpAddress(int i) {
    return http[i];
  }

  /** The value of {@code key} read linearizably through node {@code i}; null when absent. */
  byte[] getLinearizable(int i, byte[] key) {
    GetResponse r =
        readStubs
            .at(i)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .get(
                GetRequest.newBuilder()
                    .setKey(ByteString.copyFrom(key))
                    .setConsistency(io.shale.client.proto.Consistency.LINEARIZABLE)
                    .build());
    return r.getFound() ? r.getValue().toByteArray() : null;
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

  /** A channel to {@code hostPort} in TLS, as the user root with its client certificate. */
  private static ManagedChannel tlsChannel(String hostPort, Path certs) {
    try {
      return NettyChannelBuilder.forTarget(hostPort)
          .sslContext(
              GrpcSslContexts.forClient()
                  .trustManager(certs.resolve("ca.pem").toFile())
                  .keyManager(
                      ClusterCertificates.clientCertificate(certs, "root").toFile(),
                      ClusterCertificates.clientKey(certs, "root").toFile())
                  .build())
          .maxInboundMessageSize(32 << 20)
          .build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build the TLS context of " + certs, e);
    }
  }

  private static String leaderApiAddress(ManagedChannel ch) throws InterruptedException {
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
  public boolean txn(byte[] key, byte[] value) {
    ByteString k = ByteString.copyFrom(key);
    return stub()
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .txn(
            io.shale.client.proto.TxnRequest.newBuilder()
                .addCompares(
                    io.shale.client.proto.Compare.newBuilder()
                        .setKey(k)
                        .setTarget(io.shale.client.proto.Compare.Target.VERSION)
                        .setResult(io.shale.client.proto.Compare.Result.GREATER)
                        .setNumber(0))
                .addThen(
                    io.shale.client.proto.TxnOp.newBuilder()
                        .setPut(
                            io.shale.client.proto.KeyValue.newBuilder()
                                .setKey(k)
                                .setValue(ByteString.copyFrom(value))))
                .addOtherwise(io.shale.client.proto.TxnOp.newBuilder().setGet(k))
                .build())
        .getSucceeded();
  }

  @Override
  public int get(byte[] key) {
    GetResponse r =
        readStubs
            .next()
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .get(GetRequest.newBuilder().setKey(ByteString.copyFrom(key)).build());
    return r.getFound() ? r.getValue().size() : -1;
  }

  @Override
  public long range(byte[] from, byte[] to) {
    io.shale.client.proto.ScanResponse r =
        readStubs
            .next()
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .scan(
                io.shale.client.proto.ScanRequest.newBuilder()
                    .setStart(ByteString.copyFrom(from))
                    .setEnd(ByteString.copyFrom(to))
                    .build());
    long bytes = 0;
    for (var kv : r.getEntriesList()) {
      bytes += kv.getValue().size();
    }
    return bytes;
  }

  @Override
  public void close() {
    stubs.close();
    readStubs.close();
    processes.close();
    try {
      Directories.deleteRecursively(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
