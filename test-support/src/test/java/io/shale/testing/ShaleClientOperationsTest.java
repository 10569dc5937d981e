package io.shale.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.client.CasResult;
import io.shale.client.Entry;
import io.shale.client.Expectation;
import io.shale.client.InvalidRequestException;
import io.shale.client.KeyTooLargeException;
import io.shale.client.Member;
import io.shale.client.Members;
import io.shale.client.ReadConsistency;
import io.shale.client.ShaleClient;
import io.shale.client.ValueTooLargeException;
import io.shale.client.proto.NodeStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every operation of the SDK against one real 3-node cluster, shared by the tests here. */
class ShaleClientOperationsTest {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  @Test
  void getPutDeleteSyncAndAsync(ShaleClient client) throws Exception {
    client.put("ops/a", "1");
    Entry a = client.get("ops/a");
    assertThat(a.valueUtf8()).isEqualTo("1");
    assertThat(a.modIndex()).isPositive();
    assertThat(client.get("ops/missing")).isNull();
    client.putAsync(b("ops/b"), b("2")).get();
    assertThat(client.getAsync(b("ops/b")).get().valueUtf8()).isEqualTo("2");
    // A stale read from some node sees the write once that node applied it; the linearizable
    // default sees it at once (checked above).
    assertThat(client.get(b("ops/b"), ReadConsistency.LINEARIZABLE).valueUtf8()).isEqualTo("2");
    client.delete("ops/a");
    client.deleteAsync(b("ops/b")).get();
    assertThat(client.get("ops/a")).isNull();
    assertThat(client.get("ops/b")).isNull();
  }

  @Test
  void compareAndSetOnValueAbsenceAndModIndex(ShaleClient client) {
    assertThat(client.compareAndSet("cas/k", Expectation.absent(), "v1").applied()).isTrue();
    assertThat(client.compareAndSet("cas/k", Expectation.absent(), "v2").applied())
        .as("present: absence fails")
        .isFalse();
    CasResult wrong = client.compareAndSet("cas/k", Expectation.value("nope"), "v2");
    assertThat(wrong.applied()).isFalse();
    assertThat(wrong.current().valueUtf8())
        .as("a failed CAS returns the current value")
        .isEqualTo("v1");
    long index = client.get("cas/k").modIndex();
    assertThat(wrong.current().modIndex()).isEqualTo(index);

    CasResult stale = client.compareAndSet("cas/k", Expectation.modIndex(index - 1), "v2");
    assertThat(stale.applied()).isFalse();
    CasResult byIndex = client.compareAndSet("cas/k", Expectation.modIndex(index), "v2");
    assertThat(byIndex.applied()).isTrue();
    assertThat(byIndex.current().valueUtf8()).isEqualTo("v2");
    assertThat(byIndex.current().modIndex()).isGreaterThan(index);
    // The same index again: the key moved on, so it fails.
    assertThat(client.compareAndSet("cas/k", Expectation.modIndex(index), "v3").applied())
        .isFalse();
    // A CAS to null deletes; mod index 0 means absent.
    assertThat(client.compareAndSet("cas/k", Expectation.value("v2"), null).applied()).isTrue();
    assertThat(client.get("cas/k")).isNull();
    assertThat(client.compareAndSet("cas/k", Expectation.modIndex(0), "again").applied()).isTrue();
  }

  @Test
  void batchesApplyAtomicallyInOrder(ShaleClient client) {
    client.put("batch/old", "x");
    client
        .batch()
        .put("batch/1", "a")
        .put("batch/2", "b")
        .delete("batch/old")
        .put("batch/1", "a2")
        .commit();
    assertThat(client.get("batch/1").valueUtf8())
        .as("a later op on the same key wins")
        .isEqualTo("a2");
    assertThat(client.get("batch/2").valueUtf8()).isEqualTo("b");
    assertThat(client.get("batch/old")).isNull();
    // All entries of one batch carry the batch's index.
    assertThat(client.get("batch/1").modIndex()).isEqualTo(client.get("batch/2").modIndex());
    assertThatThrownBy(() -> client.batch().commit())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("empty batch");
    // One bad op refuses the whole batch: nothing of it is applied.
    assertThatThrownBy(() -> client.batch().put("batch/3", "c").put("", "bad").commit())
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("key is empty");
    assertThat(client.get("batch/3")).isNull();
  }

  @Test
  void scansPageThroughRangesForwardReverseLimitedAndKeysOnly() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ShaleClient client = cluster.newClient(b -> b.meterRegistry(registry));
    var batch = client.batch();
    for (int i = 0; i < 250; i++) {
      batch.put(String.format("scan/%04d", i), "value-" + i);
    }
    batch.put("scanz", "outside the prefix").commit();

    List<String> all =
        client.scanPrefix("scan/").pageSize(40).stream().map(Entry::keyUtf8).toList();
    assertThat(all)
        .hasSize(250)
        .startsWith("scan/0000")
        .endsWith("scan/0249")
        .isSorted()
        .doesNotHaveDuplicates();
    assertThat(pages(registry)).as("250 keys in pages of 40").isEqualTo(7);

    // Lazy: taking 50 entries fetches two pages of 40, not the whole range.
    List<String> first50 =
        client.scanPrefix("scan/").pageSize(40).stream().limit(50).map(Entry::keyUtf8).toList();
    assertThat(first50).hasSize(50).endsWith("scan/0049");
    assertThat(pages(registry)).isEqualTo(7 + 2);

    List<Entry> reverse = new ArrayList<>();
    client.scan("scan/0100", "scan/0200").reverse().pageSize(30).limit(75).forEach(reverse::add);
    assertThat(reverse).hasSize(75);
    assertThat(reverse.get(0).keyUtf8()).isEqualTo("scan/0199");
    assertThat(reverse.get(74).keyUtf8()).isEqualTo("scan/0125");
    assertThat(reverse.get(0).valueUtf8()).isEqualTo("value-199");

    Iterator<Entry> keysOnly = client.scanPrefix("scan/").keysOnly().limit(3).iterator();
    assertThat(keysOnly.next().value()).isEmpty();

    List<Entry> async = client.scan("scan/0240", null).pageSize(4).toListAsync().get();
    assertThat(async.stream().map(Entry::keyUtf8)).hasSize(11).endsWith("scanz");

    // deleteRange and deletePrefix
    client.deleteRange("scan/0000", "scan/0100");
    assertThat(client.scanPrefix("scan/").stream().count()).isEqualTo(150);
    client.deleteRangeAsync(b("scan/0100"), b("scan/0200")).get();
    assertThat(client.scanPrefix("scan/").stream().findFirst().orElseThrow().keyUtf8())
        .isEqualTo("scan/0200");
    client.deletePrefix("scan/");
    assertThat(client.scanPrefix("scan/").stream().count()).isZero();
    assertThat(client.get("scanz").valueUtf8()).isEqualTo("outside the prefix");

    assertThat(registry.find("shale.client.requests").tag("operation", "put").timers())
        .as("no single puts here")
        .isEmpty();
    assertThat(
            registry
                .get("shale.client.requests")
                .tag("operation", "batch")
                .tag("outcome", "ok")
                .timer()
                .count())
        .isEqualTo(1);
  }

  /**
   * Pages end at 4 MiB of keys and values whatever their entry limit, so a page of large values
   * never outgrows a gRPC message: 12 values of 1 MiB come in 3 pages of at most 4 or 5.
   */
  @Test
  void scanPagesOfLargeValuesAreCutByBytes() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ShaleClient client = cluster.newClient(b -> b.meterRegistry(registry));
    byte[] mib = new byte[1 << 20];
    for (int i = 0; i < 12; i++) {
      mib[0] = (byte) i;
      client.put(b(String.format("big/%02d", i)), mib);
    }
    List<Entry> all = client.scanPrefix("big/").stream().toList();
    assertThat(all).hasSize(12);
    assertThat(all.get(11).value()).hasSize(1 << 20).startsWith((byte) 11);
    assertThat(pages(registry)).as("pages of at most 4 MiB + one value").isEqualTo(3);
  }

  @Test
  void limitsAndBadRequestsFailWithTypedExceptionsNamingTheLimit(ShaleClient client) {
    assertThatThrownBy(() -> client.put(new byte[65 * 1024 + 1], b("v")))
        .isInstanceOf(KeyTooLargeException.class)
        .hasMessageContaining("key of 66561 bytes exceeds the limit of 65536 bytes")
        .hasMessageContaining("limits.max_key_size");
    assertThatThrownBy(() -> client.put(b("big"), new byte[(16 << 20) + 1]))
        .isInstanceOf(ValueTooLargeException.class)
        .hasMessageContaining("limits.max_value_size");
    assertThatThrownBy(() -> client.put("", "v"))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("key is empty");
    assertThatThrownBy(() -> client.scan("b", "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("end must be after start");
    assertThatThrownBy(() -> ShaleClient.builder().endpoints("localhost"))
        .hasMessageContaining("endpoint 'localhost' is not HOST:PORT");
    assertThatThrownBy(() -> ShaleClient.builder().build())
        .hasMessageContaining("at least one endpoint");
  }

  @Test
  void manyConcurrentAsyncWritesShareTheClient(ShaleClient client) throws Exception {
    List<CompletableFuture<Void>> writes =
        IntStream.range(0, 200).mapToObj(i -> client.putAsync(b("conc/" + i), b("v" + i))).toList();
    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get();
    assertThat(client.scanPrefix("conc/").stream().count()).isEqualTo(200);
  }

  @Test
  void clusterAdministration(ShaleClient client) throws Exception {
    Members m = client.cluster().members();
    assertThat(m.members()).extracting(Member::id).containsExactlyInAnyOrder("n1", "n2", "n3");
    assertThat(m.leaderId()).isEqualTo(cluster.leader());
    List<NodeStatus> status = client.cluster().status();
    assertThat(status).hasSize(3).allMatch(NodeStatus::getReachable);
    assertThat(status.stream().filter(s -> s.getRole().equals("LEADER")).count()).isEqualTo(1);
    for (int i = 0; i < 20; i++) {
      client.put("admin/k", "v");
    }
    long snapshot = client.cluster().snapshot("n2");
    assertThat(snapshot).as("snapshot index on n2").isPositive();
    client.cluster().compact("n3");
    String target =
        cluster.runningNodes().stream()
            .filter(id -> !id.equals(m.leaderId()))
            .findFirst()
            .orElseThrow();
    assertThat(client.cluster().transferLeadership(target).leaderId()).isEqualTo(target);
    assertThat(client.get("admin/k").valueUtf8()).isEqualTo("v");
  }

  private static long pages(SimpleMeterRegistry registry) {
    return registry
        .get("shale.client.requests")
        .tag("operation", "scan")
        .tag("outcome", "ok")
        .timer()
        .count();
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
