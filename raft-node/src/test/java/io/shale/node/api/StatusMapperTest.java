package io.shale.node.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.client.ErrorTrailers;
import io.shale.engine.pressure.WritePressure;
import io.shale.node.pressure.WriteThrottledByReplica;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.junit.jupiter.api.Test;

class StatusMapperTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final StatusMapper statuses = new StatusMapper("n1", registry);

  @Test
  void aReplicaAtItsStopThresholdIsResourceExhaustedWithTheThrottlingTrailers() {
    WritePressure stopped =
        new WritePressure(
            WritePressure.Condition.STOPPED,
            WritePressure.Cause.L0_FILES,
            40,
            36,
            Duration.ofMillis(250));
    StatusException e = statuses.writeFailure(new WriteThrottledByReplica("n3", stopped));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(ErrorTrailers.WRITE_THROTTLED);
    assertThat(e.getTrailers().get(ErrorTrailers.THROTTLED_NODE)).isEqualTo("n3");
    assertThat(e.getTrailers().get(ErrorTrailers.THROTTLE_CAUSE)).isEqualTo("L0_FILES");
    assertThat(
            registry.counter("shale.writes.throttled", "node", "n3", "cause", "L0_FILES").count())
        .isEqualTo(1);
  }

  @Test
  void ratisPendingRequestLimitsAreThrottlingByThisNode() {
    StatusException e =
        statuses.writeFailure(
            new IOException("wrapped", new ResourceUnavailableException("element limit reached")));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getTrailers().get(ErrorTrailers.THROTTLED_NODE)).isEqualTo("n1");
    assertThat(e.getTrailers().get(ErrorTrailers.THROTTLE_CAUSE))
        .isEqualTo("RAFT_PENDING_REQUESTS");
    assertThat(e.getTrailers().get(ErrorTrailers.RETRY_AFTER_MS)).isEqualTo("100");
  }

  @Test
  void noLeaderAnywhereInTheCauseChainIsUnavailableWithTheNoLeaderTrailer() {
    RaftGroupMemberId member =
        RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId());
    for (Exception cause :
        new Exception[] {
          new LeaderNotReadyException(member),
          new IOException(new NotLeaderException(member, null, List.of()))
        }) {
      StatusException e = statuses.writeFailure(cause);
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(ErrorTrailers.NO_LEADER);
    }
  }

  @Test
  void anyOtherFailureIsUnavailableWithoutAReason() {
    StatusException e = statuses.writeFailure(new IOException("disk on fire"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription()).contains("disk on fire");
    assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isNull();
  }

  @Test
  void limitsNameTheirTrailer() {
    StatusException e = StatusMapper.limitExceeded(ErrorTrailers.KEY_TOO_LARGE, "too long");
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getTrailers().get(ErrorTrailers.ERROR)).isEqualTo(ErrorTrailers.KEY_TOO_LARGE);
  }
}
