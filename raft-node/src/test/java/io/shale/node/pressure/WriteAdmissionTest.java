package io.shale.node.pressure;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.pressure.WritePressure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WriteAdmissionTest {
  private final AtomicReference<WritePressure> local = new AtomicReference<>();
  private final ReplicaPressure replicas =
      new ReplicaPressure("n1", local::get, Duration.ofMinutes(1));
  private final List<Duration> slept = new ArrayList<>();
  private final WriteAdmission admission = new WriteAdmission(replicas, slept::add);

  @Test
  void normalPressureAdmitsAtOnce() throws Exception {
    local.set(WritePressure.NONE);
    assertThat(admission.admit()).isNull();
    assertThat(slept).isEmpty();
  }

  @Test
  void delayedPressureWaitsTheSuggestedDelayThenAdmits() throws Exception {
    local.set(WritePressure.NONE);
    replicas.report("n2", delayed(Duration.ofMillis(7)));
    assertThat(admission.admit()).isNull();
    assertThat(slept).containsExactly(Duration.ofMillis(7));
  }

  @Test
  void stoppedPressureRefusesNamingTheNode() throws Exception {
    local.set(WritePressure.NONE);
    replicas.report("n3", stopped());
    WriteThrottledByReplica refused = admission.admit();
    assertThat(refused).isNotNull();
    assertThat(refused.getMessage()).contains("n3");
    assertThat(slept).isEmpty();
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
