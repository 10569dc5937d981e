package io.shale.engine.pressure;

import java.time.Duration;

/**
 * {@code [lsm.write_pressure]}; {@link #DEFAULT} holds the seed's values.
 *
 * @param enabled false turns delays and rejections off (the seed's "before"); sealed memtables are
 *     still bounded, by blocking the writer, so memory cannot grow without limit
 * @param level0SlowdownWritesTrigger level-0 files at which writes start to be delayed
 * @param level0StopWritesTrigger level-0 files at which writes are refused
 * @param softPendingCompactionBytesLimit pending compaction bytes at which writes are delayed
 * @param hardPendingCompactionBytesLimit pending compaction bytes at which writes are refused
 * @param maxImmutableMemtables sealed memtables waiting for flush at which writes are refused; one
 *     less delays them. Bounds memory when flushes fall behind.
 * @param maxDelay the longest one write is delayed, and the delay suggested to a client just below
 *     a stop threshold (suggested delays grow linearly from 1 ms at the slowdown threshold to this)
 * @param delayedWriteRate bytes per second the engine admits while delayed, at the slowdown
 *     threshold, falling linearly to a tenth of it at the stop threshold (RocksDB's
 *     delayed_write_rate, whose default of 16 MiB/s this keeps): each write waits for its own
 *     bytes' turn, so a small write is delayed little and a large one more
 */
public record WritePressureOptions(
    boolean enabled,
    int level0SlowdownWritesTrigger,
    int level0StopWritesTrigger,
    long softPendingCompactionBytesLimit,
    long hardPendingCompactionBytesLimit,
    int maxImmutableMemtables,
    Duration maxDelay,
    long delayedWriteRate) {

  /** The default of {@code delayed_write_rate}: 16 MiB/s. */
  public static final long DEFAULT_DELAYED_WRITE_RATE = 16L << 20;

  public static final WritePressureOptions DEFAULT =
      new WritePressureOptions(
          true,
          20,
          36,
          64L << 30,
          256L << 30,
          4,
          Duration.ofMillis(100),
          DEFAULT_DELAYED_WRITE_RATE);

  public WritePressureOptions {
    check("level0_slowdown_writes_trigger", level0SlowdownWritesTrigger, 1, 10_000);
    check("level0_stop_writes_trigger", level0StopWritesTrigger, 1, 10_000);
    if (level0StopWritesTrigger < level0SlowdownWritesTrigger) {
      throw new IllegalArgumentException(
          "lsm.write_pressure.level0_stop_writes_trigger ("
              + level0StopWritesTrigger
              + ") must be >= level0_slowdown_writes_trigger ("
              + level0SlowdownWritesTrigger
              + ")");
    }
    check(
        "soft_pending_compaction_bytes_limit", softPendingCompactionBytesLimit, 1 << 20, 1L << 60);
    check(
        "hard_pending_compaction_bytes_limit", hardPendingCompactionBytesLimit, 1 << 20, 1L << 60);
    if (hardPendingCompactionBytesLimit < softPendingCompactionBytesLimit) {
      throw new IllegalArgumentException(
          "lsm.write_pressure.hard_pending_compaction_bytes_limit "
              + "must be >= soft_pending_compaction_bytes_limit");
    }
    check("max_immutable_memtables", maxImmutableMemtables, 1, 64);
    if (maxDelay == null
        || maxDelay.isNegative()
        || maxDelay.compareTo(Duration.ofSeconds(10)) > 0) {
      throw new IllegalArgumentException(
          "lsm.write_pressure.max_delay must be in [0s, 10s], got " + maxDelay);
    }
    check("delayed_write_rate", delayedWriteRate, 1 << 10, 1L << 40);
  }

  private static void check(String key, long v, long min, long max) {
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "lsm.write_pressure." + key + " must be in [" + min + ", " + max + "], got " + v);
    }
  }

  /** The same thresholds, with delays and rejections turned off (memtables still bounded). */
  public WritePressureOptions disabled() {
    return new WritePressureOptions(
        false,
        level0SlowdownWritesTrigger,
        level0StopWritesTrigger,
        softPendingCompactionBytesLimit,
        hardPendingCompactionBytesLimit,
        maxImmutableMemtables,
        maxDelay,
        delayedWriteRate);
  }
}
