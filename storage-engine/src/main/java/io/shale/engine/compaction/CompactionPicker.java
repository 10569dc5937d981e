package io.shale.engine.compaction;

import io.shale.engine.key.Keys;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Chooses the next compaction: every eligible file is scored ({@link CompactionScore}) and the
 * highest-scoring one whose inputs are free is taken. Level 0 is one candidate (its files overlap,
 * so they are compacted together).
 *
 * <p>The score sees benefit, not cost, so: within a level each file's score is scaled by the
 * cheapest file's cost over its own, cost being {@code 1 + overlap / size}; the seed's factors then
 * decide between files of similar cost and size pressure between levels. A file eligible only for
 * its tombstones (level under target) is compacted only when the compaction drops them (its output
 * level is the last holding keys of its range) and rewrites at most {@code level_multiplier} times
 * its size. Rationale: docs/ARCHITECTURE.md, section "Compaction"; figures: docs/benchmarks.md.
 *
 * <p>Stateless and thread-safe; the caller passes what is running.
 */
public final class CompactionPicker {
  private final CompactionOptions options;

  public CompactionPicker(CompactionOptions options) {
    this.options = options;
  }

  /** A scored candidate: a file of {@code level} (or all of level 0, {@code file == null}). */
  public record Candidate(
      int level, FileMetadata file, double sizePressure, double score, CompactionReason reason) {}

  /** Size pressure of a level: file count / trigger on level 0, bytes / target below. */
  public double sizePressure(Version v, int level) {
    if (level == 0) {
      return (double) v.files(0).size() / options.level0FileNumCompactionTrigger();
    }
    return (double) v.levelBytes(level) / options.targetBytes(v, level);
  }

  /** Every eligible candidate of {@code v}, highest score first. */
  public List<Candidate> candidates(Version v, long nowMillis) {
    CompactionScore s = options.score();
    List<Candidate> out = new ArrayList<>();
    int lastInputLevel = v.numLevels() - 2;
    List<FileMetadata> l0 = v.files(0);
    if (!l0.isEmpty()) {
      long entries = 0;
      long tombstones = 0;
      double oldest = 0;
      for (FileMetadata f : l0) {
        entries += f.properties().entries();
        tombstones += f.properties().tombstones();
        oldest = Math.max(oldest, f.ageDays(nowMillis));
      }
      double ratio = entries == 0 ? 0 : (double) tombstones / entries;
      double pressure = sizePressure(v, 0);
      // Level 0 waits for its trigger whatever its tombstones: moving them to level 1 drops
      // none, costs a rewrite of level 1 each time, and a read that meets a tombstone in level 0
      // stops there (on the seed benchmark, compacting level 0 early for its tombstones wrote
      // 130 MB a minute).
      if (pressure >= 1.0) {
        add(out, 0, null, pressure, ratio, oldest, s, 1.0);
      }
    }
    for (int level = 1; level <= lastInputLevel; level++) {
      double pressure = sizePressure(v, level);
      List<FileMetadata> files = v.files(level);
      long[] overlap = overlapBytes(files, v.files(level + 1));
      // Bytes a compaction writes per byte it moves down: 1 + overlap / size. The cheapest file
      // of the level keeps its whole score, the others are scaled by how much dearer they are.
      double cheapest = Double.MAX_VALUE;
      for (int i = 0; i < files.size(); i++) {
        cheapest = Math.min(cheapest, writtenPerByteMoved(files.get(i), overlap[i]));
      }
      for (int i = 0; i < files.size(); i++) {
        FileMetadata f = files.get(i);
        long normal = f.size() * options.levelMultiplier();
        if (pressure < 1.0
            && (pressure * s.tombstoneFactor(f.properties().tombstoneRatio()) < 1.0
                || overlap[i] > normal
                || !isBottommost(v, level + 1, f))) {
          continue; // at most eligible for its tombstones, and not worth it (see above)
        }
        double cost = cheapest / writtenPerByteMoved(f, overlap[i]);
        add(
            out,
            level,
            f,
            pressure,
            f.properties().tombstoneRatio(),
            f.ageDays(nowMillis),
            s,
            cost);
      }
    }
    out.sort(Comparator.comparingDouble(Candidate::score).reversed());
    return out;
  }

  private static double writtenPerByteMoved(FileMetadata f, long overlap) {
    return 1.0 + (double) overlap / Math.max(1, f.size());
  }

  /** True if no level below {@code outputLevel} holds keys in {@code f}'s range. */
  private static boolean isBottommost(Version v, int outputLevel, FileMetadata f) {
    for (int l = outputLevel + 1; l < v.numLevels(); l++) {
      if (!v.overlapping(l, f.smallestKey(), f.largestKey()).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /**
   * For each file of a level (sorted, disjoint), the bytes of {@code next} (the next level) its key
   * range overlaps: one merge-like pass over both levels.
   */
  static long[] overlapBytes(List<FileMetadata> files, List<FileMetadata> next) {
    long[] out = new long[files.size()];
    int j = 0;
    for (int i = 0; i < files.size(); i++) {
      FileMetadata f = files.get(i);
      while (j < next.size() && Keys.compare(next.get(j).largestKey(), f.smallestKey()) < 0) {
        j++;
      }
      for (int k = j;
          k < next.size() && Keys.compare(next.get(k).smallestKey(), f.largestKey()) <= 0;
          k++) {
        out[i] += next.get(k).size();
      }
    }
    return out;
  }

  private static void add(
      List<Candidate> out,
      int level,
      FileMetadata f,
      double pressure,
      double tombstoneRatio,
      double ageDays,
      CompactionScore s,
      double cost) {
    if (pressure <= 0) {
      return;
    }
    double trigger = pressure * s.tombstoneFactor(tombstoneRatio);
    if (trigger < 1.0) {
      return;
    }
    CompactionReason reason = pressure >= 1.0 ? CompactionReason.SIZE : CompactionReason.TOMBSTONES;
    out.add(
        new Candidate(
            level, f, pressure, s.score(pressure, tombstoneRatio, ageDays) * cost, reason));
  }

  /**
   * The best compaction that does not touch a busy file nor write a key range another running
   * compaction writes on the same output level; null if there is none.
   */
  public Compaction pick(Version v, Set<Long> busyFiles, List<Compaction> running, long nowMillis) {
    for (Candidate c : candidates(v, nowMillis)) {
      Compaction comp =
          expand(
              v,
              c.level(),
              c.file() == null ? v.files(0) : List.of(c.file()),
              c.score(),
              c.reason());
      if (comp != null && isFree(comp, busyFiles, running)) {
        return comp;
      }
    }
    return null;
  }

  /**
   * A manual compaction of the files of {@code level} overlapping {@code [start, end]} (nulls are
   * unbounded) into the next level, or null if the level holds none there.
   */
  public Compaction manual(Version v, int level, byte[] start, byte[] end) {
    List<FileMetadata> in = v.overlapping(level, start, end);
    if (in.isEmpty() || level >= v.numLevels() - 1) {
      return null;
    }
    return expand(v, level, level == 0 ? v.files(0) : in, 0, CompactionReason.MANUAL);
  }

  private Compaction expand(
      Version v, int level, List<FileMetadata> inputs, double score, CompactionReason reason) {
    if (inputs.isEmpty()) {
      return null;
    }
    byte[] lo = null;
    byte[] hi = null;
    for (FileMetadata f : inputs) {
      lo = lo == null || Keys.compare(f.smallestKey(), lo) < 0 ? f.smallestKey() : lo;
      hi = hi == null || Keys.compare(f.largestKey(), hi) > 0 ? f.largestKey() : hi;
    }
    int out = level + 1;
    return new Compaction(level, out, inputs, v.overlapping(out, lo, hi), score, reason);
  }

  private static boolean isFree(Compaction c, Set<Long> busyFiles, List<Compaction> running) {
    for (FileMetadata f : c.allInputs()) {
      if (busyFiles.contains(f.number())) {
        return false;
      }
    }
    byte[] lo = c.smallestKey();
    byte[] hi = c.largestKey();
    for (Compaction r : running) {
      if (r.outputLevel() == c.outputLevel()
          && Keys.compare(lo, r.largestKey()) <= 0
          && Keys.compare(r.smallestKey(), hi) <= 0) {
        return false;
      }
    }
    return true;
  }
}
