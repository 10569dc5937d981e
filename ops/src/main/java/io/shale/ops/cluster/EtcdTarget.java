package io.shale.ops.cluster;

import com.google.protobuf.ByteString;
import io.shale.ops.Directories;
import io.shale.ops.cluster.etcd.Compare;
import io.shale.ops.cluster.etcd.KVGrpc;
import io.shale.ops.cluster.etcd.PutRequest;
import io.shale.ops.cluster.etcd.RangeRequest;
import io.shale.ops.cluster.etcd.RangeResponse;
import io.shale.ops.cluster.etcd.RequestOp;
import io.shale.ops.cluster.etcd.TxnRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Three etcd members (the {@code etcd} binary on the PATH: Debian's etcd-server, 3.4) as child
 * processes on loopback, driven through etcd's KV gRPC API on the leader. etcd fsyncs its WAL
 * before acknowledging, as Shale's Raft log does. Its backend quota is raised to 8 GiB and it
 * compacts its history every 1,000 revisions so that large values do not fill the default 2 GiB
 * quota during a run.
 */
final class EtcdTarget implements KvTarget {
  private final LocalProcesses processes = new LocalProcesses();
  private final List<Process> started = new ArrayList<>();
  private int leaderIndex = -1;
  private final Path dir;
  private final StubPool<KVGrpc.KVBlockingStub> stubs;
  private final StubPool<KVGrpc.KVBlockingStub> readStubs;
  final String version;

  EtcdTarget(Path dir, int channelCount) throws Exception {
    this.dir = dir;
    Directories.deleteRecursively(dir); // a run that was killed leaves its data behind
    Files.createDirectories(dir);
    String[] names = {"e1", "e2", "e3"};
    String[] client = new String[3];
    String[] peer = new String[3];
    StringBuilder cluster = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      client[i] = "http://127.0.0.1:" + LocalProcesses.freePort();
      peer[i] = "http://127.0.0.1:" + LocalProcesses.freePort();
      cluster.append(i == 0 ? "" : ",").append(names[i]).append('=').append(peer[i]);
    }
    for (int i = 0; i < 3; i++) {
      started.add(
          processes.start(
              List.of(
                  "etcd",
                  "--name",
                  names[i],
                  "--data-dir",
                  dir.resolve(names[i]).toString(),
                  "--listen-client-urls",
                  client[i],
                  "--advertise-client-urls",
                  client[i],
                  "--listen-peer-urls",
                  peer[i],
                  "--initial-advertise-peer-urls",
                  peer[i],
                  "--initial-cluster",
                  cluster.toString(),
                  "--initial-cluster-token",
                  "bench",
                  "--initial-cluster-state",
                  "new",
                  "--quota-backend-bytes",
                  String.valueOf(8L << 30),
                  "--auto-compaction-mode",
                  "revision",
                  "--auto-compaction-retention",
                  "1000",
                  "--logger",
                  "zap",
                  "--log-outputs",
                  "stderr"),
              dir.resolve(names[i] + ".log")));
    }
    for (int i = 0; i < 3; i++) {
      LocalProcesses.awaitLine(
          started.get(i),
          dir.resolve(names[i] + ".log"),
          l -> l.contains("ready to serve client requests") || l.contains("serving client traffic"),
          60);
    }
    String leader = leaderEndpoint(String.join(",", client));
    leaderIndex = java.util.Arrays.asList(client).indexOf(leader);
    version = run(List.of("etcd", "--version")).lines().findFirst().orElse("etcd");
    stubs = new StubPool<>(leader.replace("http://", ""), channelCount, KVGrpc::newBlockingStub);
    // Linearizable reads spread over every member, as etcd's clients balance them (a follower
    // answers after a read index from the leader).
    readStubs =
        new StubPool<>(
            java.util.Arrays.stream(client).map(c -> c.replace("http://", "")).toList(),
            channelCount,
            KVGrpc::newBlockingStub,
            hp -> io.shale.node.transport.NodeChannels.open(hp, 32 << 20));
  }

  @Override
  public List<Process> servers() {
    return List.copyOf(started);
  }

  @Override
  public int leaderIndex() {
    return leaderIndex;
  }

  private static final Pattern STATUS =
      Pattern.compile("\"Endpoint\":\"([^\"]+)\".*?\"member_id\":(\\d+).*?\"leader\":(\\d+)");

  /** The client URL of the leader, from {@code etcdctl endpoint status}. */
  private static String leaderEndpoint(String endpoints) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      String json =
          run(
              List.of(
                  "etcdctl",
                  "--endpoints",
                  endpoints,
                  "endpoint",
                  "status",
                  "--write-out",
                  "json"));
      Matcher m = STATUS.matcher(json);
      while (m.find()) {
        if (m.group(2).equals(m.group(3))) {
          return m.group(1);
        }
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the etcd cluster elected no leader within 60 s");
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    return out;
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
            TxnRequest.newBuilder()
                .addCompare(
                    Compare.newBuilder()
                        .setKey(k)
                        .setTarget(Compare.CompareTarget.VERSION)
                        .setResult(Compare.CompareResult.GREATER)
                        .setVersion(0))
                .addSuccess(
                    RequestOp.newBuilder()
                        .setRequestPut(
                            PutRequest.newBuilder().setKey(k).setValue(ByteString.copyFrom(value))))
                .addFailure(
                    RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(k)))
                .build())
        .getSucceeded();
  }

  @Override
  public int get(byte[] key) {
    RangeResponse r =
        readStubs
            .next()
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .range(RangeRequest.newBuilder().setKey(ByteString.copyFrom(key)).build());
    return r.getKvsCount() == 0 ? -1 : r.getKvs(0).getValue().size();
  }

  @Override
  public long range(byte[] from, byte[] to) {
    RangeResponse r =
        readStubs
            .next()
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .range(
                RangeRequest.newBuilder()
                    .setKey(ByteString.copyFrom(from))
                    .setRangeEnd(ByteString.copyFrom(to))
                    .build());
    long bytes = 0;
    for (var kv : r.getKvsList()) {
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
