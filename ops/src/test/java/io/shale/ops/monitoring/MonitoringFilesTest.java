package io.shale.ops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.client.ShaleClient;
import io.shale.testing.ShaleCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Grafana dashboard and the Prometheus alert rules name only metrics a node really exports:
 * every {@code lsm_*} and {@code shale_*} series they query is on a live node's /metrics (after
 * writes and a compaction), so a renamed meter breaks this test rather than a dashboard panel.
 */
class MonitoringFilesTest {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  private static final Pattern SERIES = Pattern.compile("\\b((?:lsm|shale)_[a-z0-9_]+)");

  @Test
  void everySeriesTheDashboardAndTheAlertsQueryExists(ShaleClient client) throws Exception {
    for (int i = 0; i < 200; i++) {
      client.put("m/" + i, "x".repeat(i % 2 == 0 ? 100 : 10_000));
    }
    String leader = cluster.leader();
    client.cluster().compact(leader);
    String metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:" + cluster.node(leader).httpPort() + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Set<String> exported = new TreeSet<>();
    for (String line : metrics.lines().toList()) {
      if (!line.startsWith("#") && !line.isBlank()) {
        exported.add(line.replaceAll("[{ ].*", ""));
      }
    }
    Path root = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();
    for (Path file :
        new Path[] {
          root.resolve("ops/grafana/dashboards/shale.json"),
          root.resolve("ops/prometheus/alerts.yml")
        }) {
      Matcher m = SERIES.matcher(Files.readString(file));
      Set<String> queried = new TreeSet<>();
      while (m.find()) {
        queried.add(m.group(1));
      }
      assertThat(queried).as("series named in %s", file).isNotEmpty();
      for (String series : queried) {
        // A series, or a histogram's family name (its _bucket/_count/_sum series exist). Counters
        // of rare events (throttled writes) are registered at start, so a calm node has them too.
        assertThat(exported)
            .as("%s queries %s", file.getFileName(), series)
            .anyMatch(e -> e.equals(series) || e.startsWith(series + "_"));
      }
    }
    assertThat(exported).contains("lsm_write_pressure_threshold", "lsm_compaction_bytes_total");
  }
}
