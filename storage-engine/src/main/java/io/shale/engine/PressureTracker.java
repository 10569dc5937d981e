package io.shale.engine;

import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.PendingCompactionBytes;
import io.shale.engine.memtable.MemtableList;
import io.shale.engine.pressure.WriteController;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;

/**
 * Feeds the {@link WriteController} the state write pressure is computed from (level-0 files,
 * estimated pending compaction bytes, sealed memtables), after every memtable seal, flush and
 * version install.
 *
 * <p>The update runs under the memtable list's lock, so that two updaters (the writer sealing a
 * memtable, a background thread installing a version) cannot store their results out of order: the
 * last stored pressure is always computed from the latest state.
 */
final class PressureTracker {
  private final VersionSet versions;
  private final MemtableList memtables;
  private final CompactionOptions compaction;
  private final WritePressureOptions thresholds;
  private final WriteController controller;
  private volatile long pendingCompactionBytes;

  PressureTracker(
      VersionSet versions,
      MemtableList memtables,
      CompactionOptions compaction,
      WritePressureOptions thresholds,
      WriteController controller) {
    this.versions = versions;
    this.memtables = memtables;
    this.compaction = compaction;
    this.thresholds = thresholds;
    this.controller = controller;
  }

  void update() {
    memtables.locked(
        () -> {
          Version v = versions.current();
          long pending = PendingCompactionBytes.estimate(v, compaction);
          pendingCompactionBytes = pending;
          controller.update(v.files(0).size(), pending, memtables.immutableCountLocked());
        });
  }

  /** The estimate of the last update. */
  long pendingCompactionBytes() {
    return pendingCompactionBytes;
  }

  /** How far the state is towards a slowdown threshold, for the I/O budget's relaxation. */
  double fractionOfSlowdown() {
    Version v = versions.current();
    return Math.max(
        (double) v.files(0).size() / thresholds.level0SlowdownWritesTrigger(),
        (double) pendingCompactionBytes / thresholds.softPendingCompactionBytesLimit());
  }
}
