package io.shale.engine;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;

/** Options that make a small test workload flush and compact often. */
final class TestOptions {
  private TestOptions() {}

  static EngineOptions tiny() {
    return tiny(Compression.LZ4);
  }

  static EngineOptions tiny(Compression compression) {
    return EngineOptions.defaults()
        .withMemtableSize(16 << 10)
        .withBlockCache(256 << 10)
        .withMaxOpenFiles(64)
        .withTable(new TableWriteOptions(512, 4, compression))
        .withBloom(BloomPolicy.DEFAULT)
        .withCompaction(
            new CompactionOptions(2, 4, 64 << 10, true, 16 << 10, 5, 1, CompactionScore.SEED))
        // Small enough that the test workloads separate values; GC'd blob files are common.
        .withBlob(new BlobOptions(true, 1024, 0.5, 64 << 10, 16 << 10, false))
        // Tests other than the pressure tests write as fast as they can: let writers wait for
        // flushes instead of failing.
        .withWritePressure(WritePressureOptions.DEFAULT.disabled());
  }
}
