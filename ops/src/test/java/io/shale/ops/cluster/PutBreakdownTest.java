package io.shale.ops.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PutBreakdownTest {
  private static final String BEFORE =
      """
      # HELP shale_grpc_server_requests_seconds
      shale_grpc_server_requests_seconds_count{method="shale.v1.KV/Put",node="n1",status="OK"} 100.0
      shale_grpc_server_requests_seconds_sum{method="shale.v1.KV/Put",node="n1",status="OK"} 1.0
      shale_grpc_server_requests_seconds_count{method="shale.v1.KV/Get",node="n1",status="OK"} 50.0
      shale_grpc_server_requests_seconds_sum{method="shale.v1.KV/Get",node="n1",status="OK"} 9.0
      shale_group_commit_writes_count{node="n1"} 10.0
      shale_group_commit_writes_sum{node="n1"} 100.0
      """;

  private static final String AFTER =
      """
      shale_grpc_server_requests_seconds_count{method="shale.v1.KV/Put",node="n1",status="OK"} 300.0
      shale_grpc_server_requests_seconds_sum{method="shale.v1.KV/Put",node="n1",status="OK"} 2.0
      shale_grpc_server_requests_seconds_count{method="shale.v1.KV/Get",node="n1",status="OK"} 60.0
      shale_grpc_server_requests_seconds_sum{method="shale.v1.KV/Get",node="n1",status="OK"} 19.0
      shale_group_commit_writes_count{node="n1"} 20.0
      shale_group_commit_writes_sum{node="n1"} 400.0
      ratis_log_worker_n1_flushTime_mean_seconds 0.0002
      ratis_log_worker_n1_syncTime_mean_seconds 0.0008
      ratis_server_n1_clientWriteRequest_mean_seconds 0.004
      ratis_server_n9_clientWriteRequest_mean_seconds NaN
      """;

  @Test
  void stagesAreDifferencesOverTheCellOrRecentMeans() {
    List<PutBreakdown.Stage> stages =
        PutBreakdown.stages(
            PutBreakdown.parse(BEFORE),
            PutBreakdown.parse(AFTER),
            PutBreakdown.parse("ratis_log_worker_n2_syncTime_mean_seconds 0.0005\n"));
    Map<String, Double> byName =
        stages.stream()
            .collect(
                java.util.stream.Collectors.toMap(
                    s -> s.stage() + "@" + s.where(), PutBreakdown.Stage::value));
    // Puts only, over the window: 1 s over 200 calls.
    assertThat(byName.get("API call, receipt to reply (gRPC server, Put)@leader"))
        .isCloseTo(5.0, within(1e-9));
    assertThat(byName.get("writes per log entry@leader")).isCloseTo(30.0, within(1e-9));
    assertThat(byName.get("log flush: write and fsync@leader")).isCloseTo(0.2, within(1e-9));
    assertThat(byName.get("log fsync@leader")).isCloseTo(0.8, within(1e-9));
    assertThat(byName.get("log fsync@follower")).isCloseTo(0.5, within(1e-9));
    // A mean over the meters with samples (a NaN one is left out).
    assertThat(byName.get("Raft write: submitted to applied and answered@leader"))
        .isCloseTo(4.0, within(1e-9));
    // No sample at all: not a number, shown as "-".
    PutBreakdown.Stage slot =
        stages.stream().filter(s -> s.stage().startsWith("waiting")).findFirst().orElseThrow();
    assertThat(PutBreakdown.format(slot)).isEqualTo("-");
  }
}
