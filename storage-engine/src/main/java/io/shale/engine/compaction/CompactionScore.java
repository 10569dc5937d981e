package io.shale.engine.compaction;

/**
 * The seed's priority score of a candidate file:
 *
 * <pre>
 *   score = size_pressure * (1 + tombstone_weight * min(tombstone_ratio, 1))
 *                         * (1 + age_weight * min(age_days, age_cap_days))
 * </pre>
 *
 * with the defaults {@code tombstone_weight = 3}, {@code age_weight = 0.5}, {@code age_cap_days =
 * 2}. {@code size_pressure} is the candidate's level measured against its target: level bytes /
 * target bytes for levels 1 and deeper, file count / compaction trigger for level 0.
 *
 * <p>Why: a level over target must shrink, but among its files the one dense with tombstones frees
 * the most space and read amplification per byte rewritten (reads stop probing dead keys), and an
 * old file has had the longest to accumulate shadowed versions. A file is eligible when {@code
 * size_pressure * tombstone_factor >= 1}: age orders candidates but never triggers a compaction
 * alone (otherwise every old file of a half-full level would be rewritten every day). A file made
 * eligible by its tombstones alone (its level under target) is also held back while its compaction
 * would rewrite more than {@code level_multiplier} times its size of the next level ({@link
 * CompactionPicker}): dropping its tombstones is then not worth the I/O. Level 0 is compacted at
 * its file-count trigger only (its candidates' scores still carry both factors).
 *
 * @param tombstoneWeight weight of the tombstone ratio; 0 turns the factor off
 * @param ageWeight weight of the age in days; 0 turns the factor off
 * @param ageCapDays age beyond which a file is not considered older
 */
public record CompactionScore(double tombstoneWeight, double ageWeight, double ageCapDays) {
  public static final CompactionScore SEED = new CompactionScore(3.0, 0.5, 2.0);

  /** Size pressure only: the "before" picker of the seed. */
  public static final CompactionScore SIZE_ONLY = new CompactionScore(0, 0, 2.0);

  public CompactionScore {
    if (tombstoneWeight < 0 || tombstoneWeight > 100) {
      throw new IllegalArgumentException(
          "lsm.compaction.tombstone_weight must be in [0, 100], got " + tombstoneWeight);
    }
    if (ageWeight < 0 || ageWeight > 100) {
      throw new IllegalArgumentException(
          "lsm.compaction.age_weight must be in [0, 100], got " + ageWeight);
    }
    if (ageCapDays < 0 || ageCapDays > 3650) {
      throw new IllegalArgumentException(
          "lsm.compaction.age_cap_days must be in [0, 3650], got " + ageCapDays);
    }
  }

  public double tombstoneFactor(double tombstoneRatio) {
    return 1 + tombstoneWeight * Math.min(Math.max(tombstoneRatio, 0), 1);
  }

  public double ageFactor(double ageDays) {
    return 1 + ageWeight * Math.min(Math.max(ageDays, 0), ageCapDays);
  }

  public double score(double sizePressure, double tombstoneRatio, double ageDays) {
    return sizePressure * tombstoneFactor(tombstoneRatio) * ageFactor(ageDays);
  }
}
