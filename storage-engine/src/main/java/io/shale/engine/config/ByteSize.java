package io.shale.engine.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Human-readable byte sizes: {@code 4096}, {@code 64KiB}, {@code 64 MiB}, {@code 1.5GiB}.
 *
 * <p>Only binary units are accepted, spelled exactly {@code B, KiB, MiB, GiB, TiB}. "MB" is
 * rejected rather than guessed at, because half the world reads it as 10^6 and the other half as
 * 2^20, and a config that silently means 5% less memory than its author thought is worse than one
 * that fails to load.
 */
public final class ByteSize {
  private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([A-Za-z]*)");

  /** Largest first, so {@link #format} picks the biggest unit that fits. */
  private static final List<String> UNITS = List.of("TiB", "GiB", "MiB", "KiB", "B");

  private ByteSize() {}

  /**
   * Parses {@code text} as a size in bytes; a fractional result is rounded down to a whole byte.
   *
   * @param key the configuration key being read, named in the error
   * @throws IllegalArgumentException if {@code text} is not a non-negative size that fits a long
   */
  public static long parse(String key, String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text.strip());
    if (!m.matches()) {
      throw unparseable(key, text);
    }
    String unit = m.group(2).isEmpty() ? "B" : m.group(2);
    if (!UNITS.contains(unit)) {
      throw unparseable(key, text);
    }
    BigDecimal bytes =
        new BigDecimal(m.group(1))
            .multiply(BigDecimal.valueOf(bytesPer(unit)))
            .setScale(0, RoundingMode.FLOOR);
    if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException(
          key + ": size \"" + text + "\" is too large (at most " + Long.MAX_VALUE + " bytes)");
    }
    return bytes.longValueExact();
  }

  /**
   * The largest unit in which {@code bytes} is exact with at most two decimals, so that {@code
   * parse(format(n)) == n} always holds: 64MiB, 1.5GiB, 4KiB, 4097B.
   */
  public static String format(long bytes) {
    BigDecimal n = BigDecimal.valueOf(bytes);
    for (String unit : UNITS) {
      BigDecimal per = BigDecimal.valueOf(bytesPer(unit));
      if (n.abs().compareTo(per) < 0) {
        continue;
      }
      // Dividing by a power of two always terminates, so this division is exact.
      BigDecimal scaled = n.divide(per).stripTrailingZeros();
      if (scaled.scale() <= 2) {
        return scaled.toPlainString() + unit;
      }
    }
    return bytes + "B";
  }

  private static long bytesPer(String unit) {
    return 1L << (10 * (UNITS.size() - 1 - UNITS.indexOf(unit)));
  }

  private static IllegalArgumentException unparseable(String key, String text) {
    String shown = text == null ? "null" : "\"" + text + "\"";
    return new IllegalArgumentException(
        key + ": cannot parse " + shown + " as a size (examples: 4096, 64KiB, 64MiB, 1.5GiB)");
  }
}
