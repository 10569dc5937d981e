package io.shale.engine.compaction;

import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.sstable.TableWriteOptions;

/** The engine options background jobs write files by (a slice of {@code EngineOptions}). */
public record JobOptions(
    TableWriteOptions table, BloomPolicy bloom, BlobOptions blob, CompactionOptions compaction) {}
