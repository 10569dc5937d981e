package io.shale.engine.compaction;

/**
 * The seed's priority score of a candidate file: {@code size_pressure * tombstone_factor *
 * age_factor}, with {@code tombstone_factor = 1 + tombstoneWeight * min(tombstone_ratio, 1)} and
 * {@code age_factor = 1 + ageWeight * min(age_days, ageCapDays)}. {@code size_pressure} is the
 * level's bytes over its target (level 0: its file count over the trigger).
 *
 * <p>Why: a tombstone-dense file frees the most per byte rewritten, an old one holds the most
 * shadowed versions. A file is eligible only when {@code size_pressure * tombstone_factor >= 1}:
 * age orders but never triggers (else every old file of a half-full level would be rewritten
 * daily). Cost rules: {@link CompactionPicker}; docs/ARCHITECTURE.md, section "Compaction".
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
