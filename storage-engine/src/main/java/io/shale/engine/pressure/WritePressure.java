package io.shale.engine.pressure;

import java.time.Duration;

/**
 * How hard the engine pushes back on writes, and why. Immutable.
 *
 * @param measured the value of the cause's signal (files, bytes, memtables)
 * @param threshold the threshold it is compared with: the slowdown trigger when DELAYED, the stop
 *     trigger when STOPPED, 0 when NORMAL
 * @param suggestedDelay how long to hold each write when DELAYED; when STOPPED, how long to wait
 *     before retrying (a hint)
 */
public record WritePressure(
    Condition condition, Cause cause, double measured, double threshold, Duration suggestedDelay) {

  /** Severity, in increasing order. */
  public enum Condition {
    NORMAL,
    DELAYED,
    STOPPED
  }

  /** The signal that set the condition. */
  public enum Cause {
    NONE,
    L0_FILES,
    PENDING_COMPACTION_BYTES,
    MEMTABLES
  }

  public static final WritePressure NONE =
      new WritePressure(Condition.NORMAL, Cause.NONE, 0, 0, Duration.ZERO);

  /** True if this pressure should win over {@code other} when several replicas report. */
  public boolean worseThan(WritePressure other) {
    int c = condition.compareTo(other.condition);
    if (c != 0) {
      return c > 0;
    }
    return suggestedDelay.compareTo(other.suggestedDelay) > 0;
  }

  /** One line for logs and error messages, e.g. {@code STOPPED by L0_FILES: 36 >= 36}. */
  public String describe() {
    if (condition == Condition.NORMAL) {
      return "NORMAL";
    }
    String value =
        cause == Cause.PENDING_COMPACTION_BYTES
            ? io.shale.engine.config.ByteSize.format((long) measured)
                + " >= "
                + io.shale.engine.config.ByteSize.format((long) threshold)
            : (long) measured + " >= " + (long) threshold;
    return condition + " by " + cause + ": " + value;
  }
}
