package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.Op;
import io.shale.client.proto.StatusRequest;
import io.shale.node.transport.NodeChannels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A follower killed (SIGKILL) while writes go on, held down, and started again on its data: it says
 * "live" once it serves and "ready" only once it has caught up, and is then current (it holds the
 * last write acknowledged before it said so). Prints the figures: time to live, time to ready, data
 * held. Short in CI (64 MiB); {@code -Dshale.restart.bytes=1073741824} is the 1 GiB form.
 */
class RestartIT {
  private static final long BYTES = Long.getLong("shale.restart.bytes", 64L << 20);
  private static final int VALUE_BYTES = 4096;
  private static final int BATCH = 32;
  private static final Pattern CAUGHT_UP = Pattern.compile("ready: caught up (\\d+) ms");

  private final List<ManagedChannel> channels = new ArrayList<>();

  private KVGrpc.KVBlockingStub kv(String address) {
    ManagedChannel ch = NodeChannels.open(address, 64 << 20);
    channels.add(ch);
    return KVGrpc.newBlockingStub(ch);
  }

  @Test
  void aKilledFollowerRestartsUnderLoadAndIsReadyOnlyOnceCaughtUp() throws Exception {
    Path dir = Files.createTempDirectory("restart");
    ShaleTarget cluster = new ShaleTarget(dir.resolve("cluster"), "512m", 2);
    ExecutorService writers = Executors.newFixedThreadPool(4);
    try {
      List<String> api = cluster.apiAddresses();
      int leader = leaderIndex(api);
      int follower = (leader + 1) % 3;
      KVGrpc.KVBlockingStub toLeader = kv(api.get(leader));

      // 1. The data the follower holds when it is killed.
      long loadStart = System.nanoTime();
      int batches = (int) (BYTES / ((long) VALUE_BYTES * BATCH));
      List<Future<?>> load = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        int writer = w;
        load.add(
            writers.submit(
                () -> {
                  for (int b = writer; b < batches; b += 4) {
                    write(toLeader, "data/" + b + "/");
                  }
                  return null;
                }));
      }
      for (Future<?> f : load) {
        f.get(30, TimeUnit.MINUTES);
      }
      double loadSeconds = (System.nanoTime() - loadStart) / 1e9;

      // 2. Writes go on while the follower is down and restarting.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong acknowledged = new AtomicLong();
      List<Future<?>> live = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        live.add(
            writers.submit(
                () -> {
                  while (!stop.get()) {
                    long n = acknowledged.get();
                    write(toLeader, "live/" + Thread.currentThread().getId() + "-" + n + "/");
                    acknowledged.incrementAndGet();
                  }
                  return null;
                }));
      }
      // How far behind the follower already is (a quorum without it commits at full speed).
      long[] lag = lagOf(api.get(leader), "n" + (follower + 1));
      cluster.kill(follower);
      long downFrom = System.nanoTime();
      long ackedAtKill = acknowledged.get();
      while (acknowledged.get() < ackedAtKill + 200
          && System.nanoTime() - downFrom < TimeUnit.SECONDS.toNanos(60)) {
        Thread.sleep(50); // the follower falls 200 batches (25 MiB) behind
      }
      double downSeconds = (System.nanoTime() - downFrom) / 1e9;
      long ackedBehind = acknowledged.get() - ackedAtKill;

      // Acknowledged before the restart: every commit index the leader passes to the restarted
      // node is at least this write's, so once it says ready it must hold it.
      String mustHold = lastKeyWritten.get();
      long restartedAt = System.nanoTime();
      Path log = cluster.restart(follower);
      long liveMillis = awaitLine(cluster.process(follower), log, "live ", restartedAt);
      long readyMillis = awaitLine(cluster.process(follower), log, "ready ", restartedAt);
      long selfReported = selfReportedMillis(log);
      assertThat(
              kv(api.get(follower))
                  .withDeadlineAfter(10, TimeUnit.SECONDS)
                  .get(
                      GetRequest.newBuilder()
                          .setKey(ByteString.copyFromUtf8(mustHold))
                          .setConsistency(Consistency.STALE)
                          .build())
                  .getFound())
          .as("the restarted follower, ready, holds %s acknowledged before it said so", mustHold)
          .isTrue();
      stop.set(true);
      for (Future<?> f : live) {
        f.get(60, TimeUnit.SECONDS);
      }
      assertThat(cluster.allAlive()).isTrue();
      assertThat(readyMillis).as("ready within 120 s of the restart").isLessThan(120_000);

      long held = size(dir.resolve("cluster").resolve("n" + (follower + 1)));
      System.out.printf(
          "restart: n%d held %.0f MiB (loaded in %.1f s), %d entries behind the leader's commit"
              + " index %d when killed, down %.1f s while %d batches of %d KiB were written; after"
              + " its start it was live in %d ms and ready (caught up with the leader) in %d ms (%d"
              + " ms after its JVM started, by its own log)%n",
          follower + 1,
          held / 1048576.0,
          loadSeconds,
          lag[1] - lag[0],
          lag[1],
          downSeconds,
          ackedBehind,
          VALUE_BYTES * BATCH / 1024,
          liveMillis,
          readyMillis,
          selfReported);
    } finally {
      writers.shutdownNow();
      channels.forEach(ManagedChannel::shutdownNow);
      Path keep = Path.of("target", "restart-logs");
      Files.createDirectories(keep);
      try (Stream<Path> logs = Files.list(dir.resolve("cluster"))) {
        for (Path l : logs.filter(p -> p.toString().endsWith(".log")).toList()) {
          Files.copy(
              l, keep.resolve(l.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
      cluster.close();
    }
  }

  /** The key last acknowledged by any writer. */
  private final java.util.concurrent.atomic.AtomicReference<String> lastKeyWritten =
      new java.util.concurrent.atomic.AtomicReference<>();

  /** One batch of {@link #BATCH} values under {@code prefix}, retried while the cluster moves. */
  private void write(KVGrpc.KVBlockingStub kv, String prefix) throws InterruptedException {
    BatchRequest.Builder b = BatchRequest.newBuilder();
    byte[] value = new byte[VALUE_BYTES];
    ThreadLocalRandom.current().nextBytes(value);
    for (int i = 0; i < BATCH; i++) {
      b.addOps(
          Op.newBuilder()
              .setPut(
                  KeyValue.newBuilder()
                      .setKey(ByteString.copyFromUtf8(prefix + i))
                      .setValue(ByteString.copyFrom(value))));
    }
    b.setRequestId(ByteString.copyFromUtf8(prefix));
    for (int attempt = 1; ; attempt++) {
      try {
        kv.withDeadlineAfter(30, TimeUnit.SECONDS).batch(b.build());
        lastKeyWritten.set(prefix + (BATCH - 1));
        return;
      } catch (StatusRuntimeException e) {
        if (attempt == 20) {
          throw e;
        }
        Thread.sleep(100); // throttled or a leader change: the request id makes a retry safe
      }
    }
  }

  /** Node {@code id}'s applied index and the leader's commit index, as the leader reports them. */
  private static long[] lagOf(String leaderApi, String id) {
    ManagedChannel ch = NodeChannels.open(leaderApi);
    try {
      List<NodeStatus> nodes =
          ClusterGrpc.newBlockingStub(ch)
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .status(StatusRequest.getDefaultInstance())
              .getNodesList();
      long applied = -1;
      long committed = -1;
      for (NodeStatus n : nodes) {
        committed = Math.max(committed, n.getCommitIndex());
        if (n.getMember().getId().equals(id)) {
          applied = n.getAppliedIndex();
        }
      }
      return new long[] {applied, committed};
    } finally {
      ch.shutdownNow();
    }
  }

  private static int leaderIndex(List<String> api) {
    ManagedChannel ch = NodeChannels.open(api.get(0));
    try {
      MembersResponse m =
          ClusterGrpc.newBlockingStub(ch)
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .listMembers(ListMembersRequest.getDefaultInstance());
      String address =
          m.getMembersList().stream()
              .filter(x -> x.getId().equals(m.getLeaderId()))
              .findFirst()
              .orElseThrow()
              .getApiAddress();
      return api.indexOf(address);
    } finally {
      ch.shutdownNow();
    }
  }

  /** Waits for a line starting with {@code prefix}; the milliseconds since {@code since}. */
  private static long awaitLine(Process p, Path log, String prefix, long since)
      throws InterruptedException, IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (System.nanoTime() < deadline) {
      if (Files.exists(log)
          && Files.readAllLines(log).stream().anyMatch(l -> l.startsWith(prefix))) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
      }
      assertThat(p.isAlive()).as("the restarted node runs; see %s", log).isTrue();
      Thread.sleep(20);
    }
    throw new AssertionError("no '" + prefix + "' line within 180 s; see " + log);
  }

  private static long selfReportedMillis(Path log) throws IOException {
    for (String l : Files.readAllLines(log)) {
      Matcher m = CAUGHT_UP.matcher(l);
      if (m.find()) {
        return Long.parseLong(m.group(1));
      }
    }
    return -1;
  }

  private static long size(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(Files::isRegularFile)
          .mapToLong(
              f -> {
                try {
                  return Files.size(f);
                } catch (IOException gone) {
                  return 0;
                }
              })
          .sum();
    }
  }
}
