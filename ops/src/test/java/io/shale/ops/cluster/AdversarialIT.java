package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shale.client.ErrorTrailers;
import io.shale.client.ShaleClient;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.ScanResponse;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import io.shale.node.statemachine.Messages;
import io.shale.node.statemachine.Reply;
import io.shale.node.transport.NodeChannels;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.retry.RetryPolicies;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Hostile and careless clients against a real three-node cluster of separate JVMs with 512 MiB
 * heaps. After each attack: no node died, every refused request got a status naming its limit,
 * every acknowledged write reads back, and the replicas hold the same data. Sizes are short in CI;
 * {@code -Dshale.adversarial.keys=5000000 -Dshale.adversarial.puts=1000 -Dit.heap=4g} is the long
 * form (the test JVM holds a thousand requests in flight).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AdversarialIT {
  private static final int KEYS = Integer.getInteger("shale.adversarial.keys", 300_000);
  private static final int PUTS = Integer.getInteger("shale.adversarial.puts", 300);

  /** Rounds of the concurrent large puts, one after another on the same cluster. */
  private static final int ROUNDS = Integer.getInteger("shale.adversarial.rounds", 1);

  private static Path dir;
  private static ShaleTarget cluster;
  private static final List<ManagedChannel> channels =
      java.util.Collections.synchronizedList(new ArrayList<>()); // clients add from many threads

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("adversarial");
    cluster = new ShaleTarget(dir.resolve("cluster"), "512m", 2);
  }

  @AfterAll
  static void stop() throws java.io.IOException {
    channels.forEach(ManagedChannel::shutdownNow);
    // The node logs outlive the cluster, for a failed run's reader.
    Path keep = Path.of("target", "adversarial-logs");
    Files.createDirectories(keep);
    for (String id : List.of("n1", "n2", "n3")) {
      Path log = dir.resolve("cluster").resolve(id + ".log");
      if (Files.exists(log)) {
        Files.copy(
            log, keep.resolve(id + ".log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void everyNodeSurvived() throws java.io.IOException {
    assertThat(cluster.allAlive()).as("every node process is the one started").isTrue();
    // A thread that ran out of memory may leave the process up but the node wedged.
    for (String id : List.of("n1", "n2", "n3")) {
      Path log = dir.resolve("cluster").resolve(id + ".log");
      if (Files.exists(log)) {
        assertThat(Files.readString(log)).as("%s's log", id).doesNotContain("OutOfMemoryError");
      }
    }
    System.out.println("peak resident memory per node (KiB): " + cluster.peakResidentKib());
  }

  private static KVGrpc.KVBlockingStub kv(int node) {
    ManagedChannel ch = NodeChannels.open(cluster.apiAddresses().get(node), 64 << 20);
    channels.add(ch);
    return KVGrpc.newBlockingStub(ch);
  }

  private static ByteString s(String v) {
    return ByteString.copyFromUtf8(v);
  }

  /** The user keys in [start, end) on {@code node}, read linearizably, at most {@code max}. */
  private static List<String> keys(int node, String start, String end, int max) {
    ScanResponse r =
        kv(node)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .scan(
                ScanRequest.newBuilder()
                    .setStart(s(start))
                    .setEnd(s(end))
                    .setLimit(max)
                    .setKeysOnly(true)
                    .setConsistency(Consistency.LINEARIZABLE)
                    .build());
    return r.getEntriesList().stream().map(e -> e.getKey().toStringUtf8()).toList();
  }

  @Test
  @Order(2)
  void aDeleteRangeOverManyKeysDeletesThemAllInBoundedEntries() throws Exception {
    ExecutorService loaders = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      int perBatch = 5_000;
      for (int from = 0; from < KEYS; from += perBatch) {
        int start = from;
        done.add(
            loaders.submit(
                () -> {
                  BatchRequest.Builder b = BatchRequest.newBuilder();
                  for (int i = start; i < Math.min(KEYS, start + perBatch); i++) {
                    b.addOps(
                        Op.newBuilder()
                            .setPut(
                                KeyValue.newBuilder()
                                    .setKey(s(String.format("p/%09d", i)))
                                    .setValue(s("v-" + i))));
                  }
                  retryThrottled(
                      () -> kv(0).withDeadlineAfter(60, TimeUnit.SECONDS).batch(b.build()));
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(10, TimeUnit.MINUTES);
      }
    } finally {
      loaders.shutdownNow();
    }
    try (ShaleClient client =
        ShaleClient.builder()
            .endpoints(cluster.apiAddresses().toArray(String[]::new))
            .deadline(Duration.ofSeconds(60))
            .build()) {
      client.put("q/keep", "kept");
      long began = System.nanoTime();
      client.deleteRange("p/", "p0");
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
      System.out.println("deleteRange over " + KEYS + " keys took " + millis + " ms");
    }
    for (int node = 0; node < 3; node++) {
      assertThat(keys(node, "p/", "p0", 10)).as("node %d", node).isEmpty();
      assertThat(keys(node, "q/", "q0", 10)).as("node %d", node).containsExactly("q/keep");
    }
  }

  @Test
  @Order(1)
  void concurrentLargePutsAreAdmittedOrRefusedWithARetryAfterAndNoneIsLost() throws Exception {
    for (int round = 1; round <= ROUNDS; round++) {
      concurrentLargePuts("big/" + round + "/");
      // Each put opened its own connection (1,000 clients): close them, or later rounds run the
      // test JVM out of file descriptors (gRPC's UNKNOWN "Unable to create Channel").
      channels.forEach(ManagedChannel::shutdownNow);
      channels.clear();
      assertThat(cluster.allAlive()).as("every node alive after round %d", round).isTrue();
      cluster.assertNoNodeLogged("OutOfMemoryError");
      System.out.println(
          "round "
              + round
              + " of "
              + ROUNDS
              + ": peak resident memory per node (KiB): "
              + cluster.peakResidentKib());
    }
  }

  private void concurrentLargePuts(String prefix) throws Exception {
    byte[] mib = new byte[1 << 20];
    ByteString value = ByteString.copyFrom(mib); // one copy shared by every client thread
    Map<String, Integer> acked = new ConcurrentHashMap<>();
    AtomicInteger refused = new AtomicInteger();
    Histogram latency = new Histogram(3);
    ExecutorService clients = Executors.newFixedThreadPool(PUTS);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    try {
      for (int i = 0; i < PUTS; i++) {
        String key = prefix + i;
        int node = i % 3;
        done.add(
            clients.submit(
                () -> {
                  go.await();
                  long t = System.nanoTime();
                  try {
                    kv(node)
                        .withDeadlineAfter(120, TimeUnit.SECONDS)
                        .put(PutRequest.newBuilder().setKey(s(key)).setValue(value).build());
                    synchronized (latency) {
                      latency.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t));
                    }
                    acked.put(key, mib.length);
                  } catch (StatusRuntimeException e) {
                    assertThat(e.getStatus().getCode())
                        .as(
                            "%s (cause: %s, trailers: %s)",
                            e, e.getStatus().getCause(), e.getTrailers())
                        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getTrailers().get(ErrorTrailers.ERROR))
                        .isEqualTo(ErrorTrailers.WRITE_THROTTLED);
                    assertThat(e.getTrailers().get(ErrorTrailers.RETRY_AFTER_MS)).isNotNull();
                    assertThat(e.getStatus().getDescription())
                        .containsAnyOf("limits.", "threshold", "pending");
                    refused.incrementAndGet();
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(10, TimeUnit.MINUTES);
      }
    } finally {
      clients.shutdownNow();
    }
    System.out.printf(
        "%d concurrent 1 MiB puts: %d admitted (p50 %.1f ms, p99 %.1f ms, max %.1f ms), %d refused%n",
        PUTS,
        acked.size(),
        latency.getValueAtPercentile(50) / 1000.0,
        latency.getValueAtPercentile(99) / 1000.0,
        latency.getMaxValue() / 1000.0,
        refused.get());
    assertThat(acked.size() + refused.get()).isEqualTo(PUTS);
    assertThat(acked).isNotEmpty();
    for (String key : acked.keySet()) {
      for (int node = 0; node < 3; node++) {
        assertThat(
                kv(node)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .get(
                        GetRequest.newBuilder()
                            .setKey(s(key))
                            .setConsistency(Consistency.LINEARIZABLE)
                            .build())
                    .getValue()
                    .size())
            .isEqualTo(mib.length);
      }
    }
  }

  private static void assertRefused(Runnable call, String error) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(error);
              assertThat(e.getStatus().getDescription()).contains("limits.");
            });
  }

  @Test
  @Order(3)
  void batchesAndScansAtAndPastEveryCap() {
    BatchRequest.Builder atCap = BatchRequest.newBuilder();
    for (int i = 0; i < 10_000; i++) {
      atCap.addOps(
          Op.newBuilder()
              .setPut(
                  KeyValue.newBuilder().setKey(s(String.format("c/%05d", i))).setValue(s("v"))));
    }
    kv(1).withDeadlineAfter(60, TimeUnit.SECONDS).batch(atCap.build());
    BatchRequest pastCap = atCap.addOps(Op.newBuilder().setDelete(s("c/x"))).build();
    assertRefused(() -> kv(1).batch(pastCap), ErrorTrailers.TOO_MANY_OPERATIONS);
    assertThat(keys(2, "c/", "c0", 10_000)).hasSize(10_000);
    assertRefused(
        () -> kv(2).scan(ScanRequest.newBuilder().setStart(s("c/")).setLimit(10_001).build()),
        ErrorTrailers.SCAN_LIMIT_TOO_LARGE);
    assertRefused(
        () -> kv(2).scan(ScanRequest.newBuilder().setStart(s("c/")).setLimit(-1).build()),
        ErrorTrailers.SCAN_LIMIT_TOO_LARGE);
    ScanResponse fromZero =
        kv(0)
            .scan(
                ScanRequest.newBuilder()
                    .setStart(ByteString.copyFrom(new byte[] {0}))
                    .setLimit(5)
                    .setKeysOnly(true)
                    .build());
    for (var e : fromZero.getEntriesList()) {
      assertThat(e.getKey().byteAt(0)).as("a scan never returns the node's records").isNotZero();
    }
  }

  /** Entries sent straight to the Raft port: refused alike on every replica, none kills one. */
  @Test
  @Order(4)
  void rawRatisEntriesAreRejectedDeterministically() throws Exception {
    List<NodeConfig.Peer> peers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add(
          new NodeConfig.Peer(
              "n" + (i + 1), cluster.raftAddresses().get(i), cluster.apiAddresses().get(i)));
    }
    try (RaftClient raw =
        RaftClient.newBuilder()
            .setProperties(new RaftProperties())
            .setRaftGroup(ShaleNode.group("bench", peers))
            .setRetryPolicy(
                RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                    20, org.apache.ratis.util.TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
            .build()) {
      byte[] reservedPut =
          ByteBuffer.allocate(3 + 4 + 1 + 4 + 5 + 4 + 1)
              .put((byte) 0x53)
              .put((byte) 1)
              .put((byte) 1)
              .putInt(1)
              .put((byte) 1)
              .putInt(5)
              .put(new byte[] {0, 't', 'e', 'r', 'm'})
              .putInt(1)
              .put((byte) 'x')
              .array();
      byte[] nested = {0x53, 1, 5, 0, 0, 0, 1, 0, 0, 0, 3, 0x53, 1, 5};
      byte[] garbage = {0x53, 1, 9, 1, 2, 3};
      byte[] foreign = "hello".getBytes();
      for (byte[] entry : List.of(reservedPut, nested, garbage, foreign)) {
        RaftClientReply r = raw.io().send(Messages.of(entry));
        assertThat(r.isSuccess()).isTrue();
        assertThat(Reply.decode(r.getMessage().getContent().toByteArray()))
            .isInstanceOf(Reply.Rejected.class);
      }
    }
    kv(0).put(PutRequest.newBuilder().setKey(s("after-raw")).setValue(s("ok")).build());
    for (int node = 0; node < 3; node++) {
      assertThat(
              kv(node)
                  .get(
                      GetRequest.newBuilder()
                          .setKey(s("after-raw"))
                          .setConsistency(Consistency.LINEARIZABLE)
                          .build())
                  .getValue()
                  .toStringUtf8())
          .isEqualTo("ok");
    }
  }

  private static void retryThrottled(Runnable call) throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      try {
        call.run();
        return;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.RESOURCE_EXHAUSTED || attempt > 200) {
          throw e;
        }
        String hint =
            e.getTrailers() == null ? null : e.getTrailers().get(ErrorTrailers.RETRY_AFTER_MS);
        TimeUnit.MILLISECONDS.sleep(hint == null ? 100 : Long.parseLong(hint));
      }
    }
  }
}
