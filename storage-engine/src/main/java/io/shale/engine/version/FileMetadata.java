package io.shale.engine.version;

import io.shale.engine.key.Keys;
import io.shale.engine.sstable.TableProperties;

/**
 * A table file as the version set knows it: number, size and the properties recorded when it was
 * written. Immutable; a file's level is where a version puts it, not part of the file.
 */
public record FileMetadata(long number, long size, TableProperties properties) {
  public byte[] smallestKey() {
    return properties.smallestKey();
  }

  public byte[] largestKey() {
    return properties.largestKey();
  }

  /** True if the file's key range intersects {@code [start, end]} (nulls are unbounded). */
  public boolean overlaps(byte[] start, byte[] end) {
    return (end == null || Keys.compare(smallestKey(), end) <= 0)
        && (start == null || Keys.compare(largestKey(), start) >= 0);
  }

  /** Age in days at {@code nowMillis}, from the creation time stored in the file. */
  public double ageDays(long nowMillis) {
    return Math.max(0, nowMillis - properties.creationTimeMillis()) / 86_400_000.0;
  }
}
