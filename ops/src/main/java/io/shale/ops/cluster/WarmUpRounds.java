package io.shale.ops.cluster;

import java.util.Locale;

/**
 * When a benchmark's unmeasured warm-up may stop: after each round (every cell shape once) it is
 * given the round's geometric mean rate and the seconds since the warm-up began. It is done once at
 * least {@code minSeconds} have passed and the last two rounds each changed by at most {@code
 * settled} (a fraction) on the round before them, or once {@code maxSeconds} have passed. Two
 * changes in a row, not one: while JVMs still compile, a single round can land near the previous
 * one by chance. Not thread-safe.
 */
final class WarmUpRounds {
  private final double minSeconds;
  private final double maxSeconds;
  private final double settled;
  private int rounds;
  private double previousMean = Double.NaN;
  private double lastChange = Double.NaN;
  private double changeBefore = Double.NaN;
  private double elapsed;

  WarmUpRounds(double minSeconds, double maxSeconds, double settled) {
    this.minSeconds = minSeconds;
    this.maxSeconds = Math.max(minSeconds, maxSeconds);
    this.settled = settled;
  }

  /** Records a round; returns whether the warm-up is done. */
  boolean record(double meanOpsPerSecond, double elapsedSeconds) {
    rounds++;
    elapsed = elapsedSeconds;
    changeBefore = lastChange;
    lastChange = meanOpsPerSecond / previousMean - 1; // NaN for the first round
    previousMean = meanOpsPerSecond;
    return (isSettled() && elapsed >= minSeconds) || elapsed >= maxSeconds;
  }

  /** Whether the last two rounds each changed by at most the settled fraction. */
  boolean isSettled() {
    return Math.abs(lastChange) <= settled && Math.abs(changeBefore) <= settled;
  }

  /** The last round's change on the one before, as a fraction; NaN after one round. */
  double lastChange() {
    return lastChange;
  }

  /**
   * What the report says of the warm-up, e.g. "5 rounds in 190 s, the last settled (+2.1% ...)".
   */
  String summary() {
    if (rounds == 1) {
      return String.format(Locale.ROOT, "1 round in %.0f s", elapsed);
    }
    return String.format(
        Locale.ROOT,
        "%d rounds in %.0f s, the last %s (%+.1f%% on the one before)",
        rounds,
        elapsed,
        isSettled() ? "settled" : "still changing",
        lastChange * 100);
  }
}
