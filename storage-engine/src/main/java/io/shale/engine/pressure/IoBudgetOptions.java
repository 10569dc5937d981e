package io.shale.engine.pressure;

import java.time.LocalTime;
import java.util.List;

/**
 * {@code [lsm.compaction.budget]}: how many bytes per second background work (compaction and blob
 * GC) may write; flushes count against it but are never held back. Default: unlimited.
 *
 * @param bytesPerSecond the limit outside every window; 0 means unlimited
 * @param windows time-of-day windows with their own limit (for example business hours at 32 MiB/s,
 *     unlimited at night, when the seed's team let compaction catch up)
 */
public record IoBudgetOptions(long bytesPerSecond, List<Window> windows) {
  public static final IoBudgetOptions UNLIMITED = new IoBudgetOptions(0, List.of());

  /**
   * From {@code start} (inclusive) to {@code end} (exclusive) local time; a window whose end is
   * before its start wraps midnight. 0 bytes per second means unlimited.
   */
  public record Window(LocalTime start, LocalTime end, long bytesPerSecond) {
    public Window {
      if (start == null || end == null || start.equals(end)) {
        throw new IllegalArgumentException(
            "lsm.compaction.budget.windows: a window needs a start "
                + "and an end that differ, got "
                + start
                + "-"
                + end);
      }
      if (bytesPerSecond < 0) {
        throw new IllegalArgumentException("lsm.compaction.budget.windows: rate must be >= 0");
      }
    }

    public boolean contains(LocalTime t) {
      return start.isBefore(end)
          ? !t.isBefore(start) && t.isBefore(end)
          : !t.isBefore(start) || t.isBefore(end);
    }
  }

  public IoBudgetOptions {
    if (bytesPerSecond < 0) {
      throw new IllegalArgumentException(
          "lsm.compaction.budget.rate must be >= 0 (0 = unlimited), got " + bytesPerSecond);
    }
    windows = List.copyOf(windows);
  }

  /** The configured limit at {@code t}: the first window containing it, else the base rate. */
  public long limitAt(LocalTime t) {
    for (Window w : windows) {
      if (w.contains(t)) {
        return w.bytesPerSecond();
      }
    }
    return bytesPerSecond;
  }
}
