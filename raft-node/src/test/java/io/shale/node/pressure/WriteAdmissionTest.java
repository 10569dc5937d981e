package io.shale.node.pressure;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.pressure.WritePressure;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WriteAdmissionTest {
  private final AtomicReference<WritePressure> local = new AtomicReference<>(WritePressure.NONE);
  private final AtomicInteger members = new AtomicInteger(3);
  private final ReplicaPressure replicas =
      new ReplicaPressure("n1", local::get, Duration.ofMinutes(1));
  private final WriteAdmission admission =
      new WriteAdmission(replicas, members::get, Duration.ofMillis(100));

  @Test
  void normalPressureAdmitsAtOnce() {
    WriteAdmission.Decision d = admission.decide();
    assertThat(d.refusal()).isNull();
    assertThat(d.delay()).isZero();
  }

  @Test
  void aDelayedReplicaDelaysBySuggestionCappedAtTheMaximum() {
    replicas.report("n2", delayed(Duration.ofMillis(7)));
    assertThat(admission.decide().delay()).isEqualTo(Duration.ofMillis(7));
    assertThat(admission.decide().slowNode()).isEqualTo("n2");
    replicas.report("n2", delayed(Duration.ofSeconds(5)));
    assertThat(admission.decide().delay()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void aLoneStoppedFollowerDelaysButDoesNotRefuse() {
    replicas.report("n3", stopped());
    WriteAdmission.Decision d = admission.decide();
    assertThat(d.refusal()).isNull();
    assertThat(d.delay()).isEqualTo(WriteAdmission.MIN_STOPPED_DELAY);
    assertThat(d.slowNode()).isEqualTo("n3");
  }

  @Test
  void stoppedFollowersBeyondAQuorumRefuseNamingOne() {
    replicas.report("n2", stopped());
    replicas.report("n3", stopped());
    WriteThrottledByReplica refused = admission.decide().refusal();
    assertThat(refused).isNotNull();
    assertThat(refused.getMessage()).containsAnyOf("n2", "n3");
    // Five members: two stopped still leave a quorum of three.
    members.set(5);
    replicas.report("n4", WritePressure.NONE);
    replicas.report("n5", WritePressure.NONE);
    assertThat(admission.decide().refusal()).isNull();
  }

  @Test
  void thisNodeStoppedRefusesWhateverTheOthers() {
    local.set(stopped());
    replicas.report("n2", WritePressure.NONE);
    replicas.report("n3", WritePressure.NONE);
    WriteThrottledByReplica refused = admission.decide().refusal();
    assertThat(refused).isNotNull();
    assertThat(refused.getMessage()).contains("n1");
  }

  private static WritePressure delayed(Duration d) {
    return new WritePressure(
        WritePressure.Condition.DELAYED, WritePressure.Cause.L0_FILES, 22, 20, d);
  }

  private static WritePressure stopped() {
    return new WritePressure(
        WritePressure.Condition.STOPPED, WritePressure.Cause.L0_FILES, 40, 36, Duration.ZERO);
  }
}
