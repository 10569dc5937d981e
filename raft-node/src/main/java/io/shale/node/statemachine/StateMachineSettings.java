package io.shale.node.statemachine;

import java.time.Duration;

/**
 * The state machine's knobs, from {@code [raft]} and {@code [limits]} of the node's TOML (where
 * each is documented with its default and why).
 *
 * @param reloadWait how long a snapshot fetch waits for the reload of the install before it
 * @param installSettle how long after a reload ends a new fetch still waits
 * @param checkpointLease a snapshot transfer's pin on a checkpoint lapses after this long unused
 * @param scanPageBytes bytes of keys and values after which a scan page ends, whatever its limit
 */
public record StateMachineSettings(
    Duration reloadWait, Duration installSettle, Duration checkpointLease, long scanPageBytes) {
  public StateMachineSettings {
    if (reloadWait.isNegative() || reloadWait.isZero()) {
      throw new IllegalArgumentException("reload wait must be positive: " + reloadWait);
    }
    if (installSettle.isNegative()) {
      throw new IllegalArgumentException("install settle must not be negative: " + installSettle);
    }
    if (checkpointLease.isNegative() || checkpointLease.isZero()) {
      throw new IllegalArgumentException("checkpoint lease must be positive: " + checkpointLease);
    }
    if (scanPageBytes <= 0) {
      throw new IllegalArgumentException("scan page size must be positive: " + scanPageBytes);
    }
  }

  public static StateMachineSettings defaults() {
    return new StateMachineSettings(
        Duration.ofSeconds(60), Duration.ofMillis(200), Duration.ofSeconds(120), 4L << 20);
  }
}
