package io.shale.ops.seed;

import io.shale.engine.EngineOptions;
import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.config.EngineConfig;
import io.shale.engine.pressure.WritePressureOptions;
import java.nio.file.Path;

/** The three configurations the seed benchmark compares, in the order it runs them. */
public enum SeedConfig {
  /**
   * The seed's "before": no blob separation, 10 bits/key everywhere, size-only picker, and no write
   * delays. Writes are still refused at 36 level-0 files, as an untuned RocksDB stops them: without
   * that wall, a burst grows level 0 past 200 files, and sixteen scans that each hold a block per
   * file exhaust the benchmark's heap (the seed's "cliff", but then there is no run to compare
   * with).
   */
  BEFORE("before", "Shale before"),
  /** The seed's settings, which are Shale's defaults. */
  AFTER("after", "Shale after"),
  /** RocksDB configured alike (see {@link RocksSeedStore}). */
  ROCKSDB("rocksdb", "RocksDB");

  private final String slug;
  private final String label;

  SeedConfig(String slug, String label) {
    this.slug = slug;
    this.label = label;
  }

  public String slug() {
    return slug;
  }

  public String label() {
    return label;
  }

  public static SeedConfig ofSlug(String s) {
    for (SeedConfig c : values()) {
      if (c.slug.equals(s)) {
        return c;
      }
    }
    throw new IllegalArgumentException(
        "unknown configuration '" + s + "' (before, after, rocksdb)");
  }

  /** Shale's options for this configuration at {@code scale}; only for BEFORE and AFTER. */
  EngineOptions shaleOptions(BenchScale scale) {
    EngineOptions defaults = EngineOptions.defaults();
    CompactionOptions c = defaults.compaction();
    BlobOptions b = defaults.blob();
    EngineOptions after =
        defaults
            .withMemtableSize(scale.memtableBytes())
            .withBlockCache(scale.blockCacheBytes())
            .withCompaction(
                new CompactionOptions(
                    c.level0FileNumCompactionTrigger(),
                    c.levelMultiplier(),
                    scale.levelBaseBytes(),
                    c.levelBaseFollowsFlushes(),
                    scale.targetFileBytes(),
                    c.numLevels(),
                    c.threads(),
                    c.score()))
            .withBlob(
                new BlobOptions(
                    b.enabled(),
                    b.minValueSizeBytes(),
                    b.gcThresholdRatio(),
                    scale.blobFileBytes(),
                    b.scanReadaheadBytes(),
                    b.adviseRandomReads()));
    return switch (this) {
      case AFTER -> after;
      case BEFORE ->
          after
              .withBlob(BlobOptions.disabled())
              .withBloom(BloomPolicy.uniform(10))
              .withCompaction(after.compaction().withScore(CompactionScore.SIZE_ONLY))
              .withWritePressure(stopOnlyAtLevel0(WritePressureOptions.DEFAULT));
      case ROCKSDB -> throw new IllegalStateException("RocksDB has no Shale options");
    };
  }

  /** {@code w} without delays on level-0 files or pending bytes: only the level-0 stop remains. */
  private static WritePressureOptions stopOnlyAtLevel0(WritePressureOptions w) {
    return new WritePressureOptions(
        true,
        w.level0StopWritesTrigger(),
        w.level0StopWritesTrigger(),
        1L << 60,
        1L << 60,
        w.maxImmutableMemtables(),
        w.maxDelay(),
        w.delayedWriteRate());
  }

  /**
   * This configuration's store in {@code dir}; {@code shaleToml} (or null) holds {@code [lsm]}
   * settings applied over Shale "after"'s options.
   */
  SeedStore open(Path dir, BenchScale scale, String shaleToml) throws Exception {
    return this == ROCKSDB
        ? new RocksSeedStore(dir, scale)
        : new ShaleSeedStore(dir, shaleOptions(scale, shaleToml));
  }

  /** {@link #shaleOptions(BenchScale)} with {@code shaleToml} applied over "after" (null: none). */
  EngineOptions shaleOptions(BenchScale scale, String shaleToml) {
    EngineOptions o = shaleOptions(scale);
    return this == AFTER && shaleToml != null ? EngineConfig.parse(shaleToml, o) : o;
  }
}
