package io.shale.engine.compaction;

import io.shale.engine.key.Keys;
import io.shale.engine.version.FileMetadata;
import java.util.List;
import java.util.function.Predicate;

/**
 * Decides where a compaction cuts its output files besides the target size: before a key once the
 * current output file's key range has spanned more than {@code maxOverlapBytes} of the level below
 * the output level (the "grandparent" level). Without it, a file of a small level can cover the
 * whole key space (level 1 after a level-0 compaction of keys written all over it) and its next
 * compaction must rewrite the whole of the level below: on the seed benchmark one 4 MiB level-1
 * file overlapped all 160 MiB of level 2, and compaction wrote 10x more bytes than RocksDB, which
 * cuts outputs the same way (LevelDB's limit is 10 target files; so is this).
 *
 * <p>Keys must be tested in ascending order; one instance serves one compaction. The overlap of the
 * current output is estimated from the grandparent files its keys have moved entirely past.
 */
public final class GrandparentBoundary implements Predicate<byte[]> {
  private final List<FileMetadata> grandparents;
  private final long maxOverlapBytes;
  private int next;
  private long overlapped;
  private boolean seenKey;

  /**
   * @param grandparents the files of the level below the output level, in key order
   */
  public GrandparentBoundary(List<FileMetadata> grandparents, long maxOverlapBytes) {
    this.grandparents = grandparents;
    this.maxOverlapBytes = maxOverlapBytes;
  }

  /** True if the output should start a new file before {@code key}. */
  @Override
  public boolean test(byte[] key) {
    while (next < grandparents.size()
        && Keys.compare(grandparents.get(next).largestKey(), key) < 0) {
      if (seenKey) {
        overlapped += grandparents.get(next).size();
      }
      next++;
    }
    seenKey = true;
    if (overlapped > maxOverlapBytes) {
      overlapped = 0;
      return true;
    }
    return false;
  }
}
