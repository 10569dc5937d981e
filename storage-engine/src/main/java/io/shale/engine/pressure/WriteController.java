package io.shale.engine.pressure;

import io.shale.engine.pressure.WritePressure.Cause;
import io.shale.engine.pressure.WritePressure.Condition;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Turns the engine's state into a {@link WritePressure}, keeps the current one, tells listeners
 * when it changes, and admits writes accordingly. Thread-safe.
 *
 * <p>The delay between a slowdown threshold {@code s} and its stop threshold {@code t} for a
 * measured value {@code x} is {@code 1 ms + (maxDelay - 1 ms) * (x - s) / (t - s)}: continuous at
 * {@code s}, monotone, and bounded by {@code maxDelay}, so a small change in state is a small
 * change in delay (no cliff, no oscillation between extremes). The worst cause wins.
 */
public final class WriteController {
  private static final Duration MIN_DELAY = Duration.ofMillis(1);

  private final WritePressureOptions options;
  private final List<Consumer<WritePressure>> listeners = new CopyOnWriteArrayList<>();
  private volatile WritePressure current = WritePressure.NONE;

  /** While delayed: when the bytes admitted so far will have passed at the delayed rate. */
  private long nextFreeNanos;

  public WriteController(WritePressureOptions options) {
    this.options = options;
  }

  public WritePressureOptions options() {
    return options;
  }

  public WritePressure current() {
    return current;
  }

  public void addListener(Consumer<WritePressure> listener) {
    listeners.add(listener);
  }

  public void removeListener(Consumer<WritePressure> listener) {
    listeners.remove(listener);
  }

  /** The pressure of a state; pure. */
  public WritePressure compute(
      int level0Files, long pendingCompactionBytes, int immutableMemtables) {
    WritePressure worst = WritePressure.NONE;
    worst =
        worse(
            worst,
            level(
                Cause.L0_FILES,
                level0Files,
                options.level0SlowdownWritesTrigger(),
                options.level0StopWritesTrigger()));
    worst =
        worse(
            worst,
            level(
                Cause.PENDING_COMPACTION_BYTES,
                pendingCompactionBytes,
                options.softPendingCompactionBytesLimit(),
                options.hardPendingCompactionBytesLimit()));
    int maxImm = options.maxImmutableMemtables();
    worst =
        worse(
            worst,
            level(Cause.MEMTABLES, immutableMemtables, maxImm >= 3 ? maxImm - 1 : maxImm, maxImm));
    return worst;
  }

  private static WritePressure worse(WritePressure a, WritePressure b) {
    return b.worseThan(a) ? b : a;
  }

  private WritePressure level(Cause cause, double x, double slowdown, double stop) {
    if (x >= stop) {
      return new WritePressure(Condition.STOPPED, cause, x, stop, retryAfter(cause));
    }
    if (x >= slowdown) {
      double f = stop > slowdown ? (x - slowdown) / (stop - slowdown) : 1;
      long nanos =
          MIN_DELAY.toNanos()
              + (long) ((options.maxDelay().toNanos() - MIN_DELAY.toNanos()) * Math.min(1, f));
      return new WritePressure(Condition.DELAYED, cause, x, slowdown, Duration.ofNanos(nanos));
    }
    return WritePressure.NONE;
  }

  /**
   * A hint, not a promise: a level-0 compaction or a flush usually takes a few hundred
   * milliseconds; working off pending bytes takes longer.
   */
  private Duration retryAfter(Cause cause) {
    Duration base = options.maxDelay().multipliedBy(5);
    if (base.compareTo(Duration.ofMillis(100)) < 0) {
      base = Duration.ofMillis(100);
    }
    return cause == Cause.PENDING_COMPACTION_BYTES ? base.multipliedBy(10) : base;
  }

  /**
   * The delay of a write of {@code bytes} admitted at {@code now} under {@code p}: writes share one
   * byte rate, {@code delayed_write_rate} scaled down by how far the state is past its slowdown
   * threshold (the suggested delay's share of {@code max_delay}) to a tenth at the stop threshold.
   * The backlog is capped at {@code max_delay}, so no write waits longer.
   */
  synchronized long delayFor(long bytes, WritePressure p, long now) {
    long max = options.maxDelay().toNanos();
    double severity =
        max == 0 ? 1 : Math.min(1, (double) p.suggestedDelay().toNanos() / Math.max(1, max));
    double rate = options.delayedWriteRate() * Math.max(0.1, 1 - 0.9 * severity);
    long start = Math.max(now, nextFreeNanos);
    nextFreeNanos = Math.min(start + (long) (Math.max(1, bytes) * 1e9 / rate), now + max);
    return nextFreeNanos - now;
  }

  /** Recompute from the engine's state; notify listeners if the pressure changed. */
  public WritePressure update(
      int level0Files, long pendingCompactionBytes, int immutableMemtables) {
    WritePressure next = compute(level0Files, pendingCompactionBytes, immutableMemtables);
    WritePressure prev;
    synchronized (this) {
      prev = current;
      current = next;
    }
    if (prev.condition() != next.condition()
        || prev.cause() != next.cause()
        || !prev.suggestedDelay().equals(next.suggestedDelay())) {
      for (Consumer<WritePressure> l : listeners) {
        l.accept(next);
      }
    }
    return next;
  }

  /**
   * Admit one write of {@code bytes}: return at once when NORMAL; when DELAYED, wait for the
   * write's turn at the delayed rate (at most {@code max_delay}); throw when STOPPED. Does nothing
   * when pressure is disabled.
   *
   * @return nanoseconds spent delaying
   * @throws WriteThrottledException when a stop threshold is reached
   */
  public long admit(long bytes) {
    if (!options.enabled()) {
      return 0;
    }
    WritePressure p = current;
    if (p.condition() == Condition.STOPPED) {
      throw new WriteThrottledException(p);
    }
    if (p.condition() == Condition.DELAYED) {
      long nanos = delayFor(bytes, p, System.nanoTime());
      try {
        Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while a write was delayed", e);
      }
      return nanos;
    }
    return 0;
  }
}
