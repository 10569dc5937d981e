package io.shale.engine.compaction;

/** Why a compaction ran. */
public enum CompactionReason {
  /** A level over its target size (level 0: over its file-count trigger). */
  SIZE,
  /** A level under target, lifted over the threshold by its tombstone density. */
  TOMBSTONES,
  /** {@code compactRange} asked for it. */
  MANUAL,
  /** Blob garbage collection rewrote the tables that reference a blob file. */
  BLOB_GC
}
