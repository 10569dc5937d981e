package io.shale.ops.seed;

import java.util.Locale;

/**
 * The burst writer of the mixed phase: from the start of every {@code periodSeconds}, for {@code
 * lengthSeconds}, one extra thread overwrites keys (zipfian, as the clients' overwrites) at {@code
 * bytesPerSecond}, or as fast as the store takes them when that is 0. Off when the period is 0. The
 * default burst (60 s period, 20 s at full speed) is the write-burst scenario the seed is about:
 * compactions fall behind while readers go on.
 */
record BurstSettings(int periodSeconds, int lengthSeconds, long bytesPerSecond) {
  static final BurstSettings NONE = new BurstSettings(0, 0, 0);

  /** 20 s of every 60 s, at full speed. */
  static final BurstSettings DEFAULT = new BurstSettings(60, 20, 0);

  BurstSettings {
    if (periodSeconds < 0 || lengthSeconds < 0 || bytesPerSecond < 0) {
      throw new IllegalArgumentException("burst period, length and rate must not be negative");
    }
    if (periodSeconds > 0 && (lengthSeconds == 0 || lengthSeconds > periodSeconds)) {
      throw new IllegalArgumentException(
          "--burst-length must be 1 to --burst-period ("
              + periodSeconds
              + ") seconds, got "
              + lengthSeconds);
    }
  }

  boolean enabled() {
    return periodSeconds > 0;
  }

  /** Whether {@code millis} into the phase lies inside a burst window. */
  boolean inWindow(long millis) {
    return enabled() && millis % (periodSeconds * 1000L) < lengthSeconds * 1000L;
  }

  /** The start of the next burst window at or after {@code millis} into the phase. */
  long nextWindowStart(long millis) {
    long period = periodSeconds * 1000L;
    return inWindow(millis) ? millis : (millis / period + 1) * period;
  }

  /** How the child process receives it: {@code period,length,rate} or {@code none}. */
  String argument() {
    return enabled() ? periodSeconds + "," + lengthSeconds + "," + bytesPerSecond : "none";
  }

  static BurstSettings ofArgument(String s) {
    if (s.equals("none")) {
      return NONE;
    }
    String[] p = s.split(",");
    return new BurstSettings(Integer.parseInt(p[0]), Integer.parseInt(p[1]), Long.parseLong(p[2]));
  }

  /** For the report's header. */
  String describe() {
    if (!enabled()) {
      return "no burst writer";
    }
    return String.format(
        Locale.ROOT,
        "a burst writer for %d s of every %d s at %s",
        lengthSeconds,
        periodSeconds,
        bytesPerSecond == 0
            ? "full speed"
            : io.shale.engine.config.ByteSize.format(bytesPerSecond) + "/s");
  }
}
