package io.shale.node.server;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.Optional;

/** The running JVM's own options (its -XX flags), as HotSpot reports them; empty elsewhere. */
final class JvmOptions {
  private JvmOptions() {}

  /** The value of option {@code name}, or empty when the JVM is not HotSpot or has no such one. */
  static Optional<String> value(String name) {
    try {
      return Optional.of(
          ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
              .getVMOption(name)
              .getValue());
    } catch (RuntimeException notHotSpot) {
      return Optional.empty();
    }
  }

  /** Whether boolean option {@code name} is on. */
  static boolean on(String name) {
    return value(name).map(Boolean::parseBoolean).orElse(false);
  }
}
