package io.shale.engine.pressure;

import java.time.Duration;

/**
 * A write was refused because a stop threshold is reached. The batch had no effect. Carries the
 * condition, the cause, the measured value, the threshold and a retry-after hint, so that the Raft
 * node can put them on the wire and a client can back off sensibly.
 */
public final class WriteThrottledException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient WritePressure pressure;

  public WriteThrottledException(WritePressure pressure) {
    super(
        "write throttled, "
            + pressure.describe()
            + " ("
            + thresholdName(pressure.cause())
            + "); retry after "
            + pressure.suggestedDelay().toMillis()
            + " ms");
    this.pressure = pressure;
  }

  private static String thresholdName(WritePressure.Cause cause) {
    return switch (cause) {
      case L0_FILES -> "lsm.write_pressure.level0_stop_writes_trigger";
      case PENDING_COMPACTION_BYTES -> "lsm.write_pressure.hard_pending_compaction_bytes_limit";
      case MEMTABLES -> "lsm.write_pressure.max_immutable_memtables";
      case NONE -> "none";
    };
  }

  public WritePressure pressure() {
    return pressure;
  }

  public Duration retryAfter() {
    return pressure.suggestedDelay();
  }
}
