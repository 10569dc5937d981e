/**
 * The seed benchmark ({@code ops/bin/seed-bench}): the before/after table of the story in {@code
 * docs/origin.md} measured on Shale's engine, side by side with RocksDB.
 *
 * <ul>
 *   <li>{@link io.shale.ops.seed.SeedWorkload}, {@link io.shale.ops.seed.ValueSizes}, {@link
 *       io.shale.ops.seed.Zipfian}: the seed's request stream (80% point reads, 15% scans of 10 to
 *       100 keys, 5% writes with deletes on hot ranges; long-tailed values; zipfian keys),
 *       deterministic per seed;
 *   <li>{@link io.shale.ops.seed.SeedConfig}, {@link io.shale.ops.seed.BenchScale}: the three
 *       configurations and the sizes they share;
 *   <li>{@code SeedStore} and its two implementations: one engine behind the operations and
 *       counters the report needs;
 *   <li>{@link io.shale.ops.seed.SeedRun}: one configuration's run in its own JVM (load, settle,
 *       timed mixed phase, probes); {@link io.shale.ops.seed.SeedBench}: starts one per
 *       configuration in a memory-limited cgroup ({@code MemoryCgroup}) and writes the report
 *       ({@code SeedReport}) and the per-second plot ({@code LatencyPlot}).
 * </ul>
 */
package io.shale.ops.seed;
