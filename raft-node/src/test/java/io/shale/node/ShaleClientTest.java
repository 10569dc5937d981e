package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.Entry;
import io.shale.client.InvalidRequestException;
import io.shale.client.ShaleClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java SDK against a real 3-node cluster. */
class ShaleClientTest {
  @TempDir
  Path dir;

  private LocalCluster cluster;
  private ShaleClient client;

  @BeforeEach
  void start() throws Exception {
    cluster = new LocalCluster(dir, 3);
    cluster.leader();
    client = ShaleClient.builder()
        .endpoints(cluster.peers.values().stream().map(p -> p.apiAddress()).toArray(String[]::new))
        .deadline(Duration.ofSeconds(5)).maxAttempts(20)
        .backoff(Duration.ofMillis(50), Duration.ofMillis(500)).build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    cluster.close();
  }

  @Test
  void everyOperationAndAScanLongerThanOnePage() throws Exception {
    client.put("a", "1");
    Entry a = client.get("a");
    assertThat(a.valueUtf8()).isEqualTo("1");
    assertThat(a.modIndex()).isPositive();
    assertThat(client.get("missing")).isNull();
    assertThat(client.compareAndSet("a", "2", "3")).isFalse();
    assertThat(client.compareAndSet("a", "1", "3")).isTrue();
    assertThat(client.compareAndSet("new", null, "x")).isTrue();
    assertThat(client.compareAndSet("new", null, "y")).isFalse();
    assertThat(client.getAsync("a".getBytes()).get().valueUtf8()).isEqualTo("3");
    client.delete("a");
    assertThat(client.get("a")).isNull();
    for (int i = 0; i < 25; i++) {
      client.putAsync(String.format("s%02d", i).getBytes(), ("v" + i).getBytes()).get();
    }
    List<String> keys = new ArrayList<>();
    for (Entry e : client.scan("s", "t", 10)) {
      keys.add(e.keyUtf8());
    }
    assertThat(keys).hasSize(25).startsWith("s00", "s01").endsWith("s24").doesNotHaveDuplicates();
    assertThatThrownBy(() -> client.put("", "v")).isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("key is empty");
  }

  /**
   * The leader's node is stopped in the middle of a stream of compare-and-set increments: the
   * client moves to another node and retries with the same request ids, so every increment
   * applies exactly once (a double apply would fail the next expected value).
   */
  @Test
  void failoverDuringWritesAppliesEachWriteOnce() throws Exception {
    assertThat(client.compareAndSet("counter", null, "0")).isTrue();
    int n = 60;
    for (int i = 0; i < n; i++) {
      if (i == 20) {
        cluster.stop(cluster.leader());
      }
      assertThat(client.compareAndSet("counter", String.valueOf(i), String.valueOf(i + 1)))
          .as("increment %d", i).isTrue();
    }
    assertThat(client.get("counter").valueUtf8()).isEqualTo(String.valueOf(n));
  }
}
