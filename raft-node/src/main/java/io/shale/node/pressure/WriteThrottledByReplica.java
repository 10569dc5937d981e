package io.shale.node.pressure;

import io.shale.engine.pressure.WritePressure;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A write refused before it entered the log because a replica's engine is STOPPED. Ratis carries
 * only its message to the client, so the message has a fixed form that {@link #parse} reads back:
 *
 * <pre>WriteThrottled: node n2 STOPPED by L0_FILES: measured 36, threshold 36, retry after 100 ms
 * </pre>
 */
public final class WriteThrottledByReplica extends IOException {
  private static final Pattern FORM =
      Pattern.compile(
          "WriteThrottled: node (\\S+) STOPPED by (\\S+): measured (\\S+), threshold (\\S+), retry after (\\d+) ms");

  /** The parsed fields of a refusal. */
  public record Details(
      String node, String cause, String measured, String threshold, long retryAfterMillis) {}

  public WriteThrottledByReplica(String node, WritePressure p) {
    super(
        String.format(
            java.util.Locale.ROOT,
            "WriteThrottled: node %s STOPPED by %s: measured %.0f, threshold %.0f, retry after %d ms",
            node,
            p.cause(),
            p.measured(),
            p.threshold(),
            Math.max(1, p.suggestedDelay().toMillis())));
  }

  /** The details of a refusal found anywhere in {@code message}, or null. */
  public static Details parse(String message) {
    if (message == null) {
      return null;
    }
    Matcher m = FORM.matcher(message);
    return m.find()
        ? new Details(m.group(1), m.group(2), m.group(3), m.group(4), Long.parseLong(m.group(5)))
        : null;
  }
}
