package io.shale.engine.pressure;

import java.time.Clock;
import java.time.LocalTime;
import java.util.function.DoubleSupplier;

/**
 * A token bucket over the bytes background work writes. Compaction and blob GC call {@link
 * #acquire} for every chunk they write and are slowed to the configured rate; flushes call {@link
 * #record} (counted, never held back: a starved flush is how writes reach a memtable stop).
 * Thread-safe.
 *
 * <p>Writes only: compaction reads about what it writes and paces its reads by its writes, so the
 * configured rate is the rate the device sees written (RocksDB's rate limiter's default too).
 *
 * <p>Relaxation: with {@code p} the state's fraction of the way to a slowdown threshold (the larger
 * of level-0 files / {@code level0_slowdown_writes_trigger} and pending compaction bytes / {@code
 * soft_pending_compaction_bytes_limit}), the limit is multiplied by {@code 1 / (2 * (1 - p))} for
 * {@code 0.5 < p < 0.95} and lifted from 0.95 on, so the budget cannot drive writes into a delay or
 * a stop.
 */
public final class IoBudget {
  private static final double BURST_SECONDS = 0.05;

  private final IoBudgetOptions options;
  private final Clock clock;
  private final DoubleSupplier pressureFraction;
  private double tokens;
  private long lastRefill = System.nanoTime();
  private long totalBytes;

  public IoBudget(IoBudgetOptions options, Clock clock, DoubleSupplier pressureFraction) {
    this.options = options;
    this.clock = clock;
    this.pressureFraction = pressureFraction;
  }

  /** The relaxation multiplier at pressure fraction {@code p}; infinite means unlimited. */
  public static double relaxation(double p) {
    if (p <= 0.5) {
      return 1;
    }
    if (p >= 0.95) {
      return Double.POSITIVE_INFINITY;
    }
    return 1 / (2 * (1 - p));
  }

  /** The limit in force now, in bytes per second; 0 means unlimited. */
  public long currentLimit() {
    long configured = options.limitAt(LocalTime.now(clock));
    if (configured == 0) {
      return 0;
    }
    double r = relaxation(pressureFraction.getAsDouble());
    return Double.isInfinite(r) ? 0 : (long) (configured * r);
  }

  /** Take {@code bytes} from the budget, sleeping as long as the rate requires. */
  public void acquire(long bytes) {
    long limit = currentLimit();
    long sleepNanos;
    synchronized (this) {
      totalBytes += bytes;
      if (limit == 0) {
        tokens = 0;
        lastRefill = System.nanoTime();
        return;
      }
      refill(limit);
      tokens -= bytes;
      sleepNanos = tokens >= 0 ? 0 : (long) (-tokens / limit * 1e9);
    }
    if (sleepNanos > 0) {
      try {
        Thread.sleep(sleepNanos / 1_000_000, (int) (sleepNanos % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Count bytes that must not wait (flushes): they use up budget but are never held back. The debt
   * they can leave is capped at one second of budget, so a burst of flushes slows compaction for at
   * most a second instead of stalling it for as long as the burst lasted.
   */
  public synchronized void record(long bytes) {
    totalBytes += bytes;
    long limit = currentLimit();
    if (limit > 0) {
      refill(limit);
      tokens = Math.max(tokens - bytes, -limit);
    }
  }

  private void refill(long limit) {
    long now = System.nanoTime();
    tokens = Math.min(limit * BURST_SECONDS, tokens + (now - lastRefill) / 1e9 * limit);
    lastRefill = now;
  }

  /** Bytes charged so far (acquired and recorded). */
  public synchronized long totalBytes() {
    return totalBytes;
  }
}
