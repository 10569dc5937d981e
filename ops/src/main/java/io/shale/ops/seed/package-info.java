/**
 * The seed benchmark ({@code ops/bin/seed-bench}): the before/after table of {@code docs/origin.md}
 * measured on Shale's engine, side by side with RocksDB (method: docs/benchmarks.md).
 *
 * <ul>
 *   <li>{@link io.shale.ops.seed.SeedWorkload}, {@link io.shale.ops.seed.ValueSizes}, {@link
 *       io.shale.ops.seed.Zipfian}: the seed's request stream, deterministic per seed;
 *   <li>{@link io.shale.ops.seed.SeedConfig}, {@link io.shale.ops.seed.BenchScale}: the three
 *       configurations and the sizes they share;
 *   <li>{@code SeedStore} and its two implementations: one engine's operations and counters;
 *   <li>{@link io.shale.ops.seed.SeedRun}: one configuration's run in its own JVM; {@link
 *       io.shale.ops.seed.SeedBench}: runs one per configuration in a memory-limited cgroup ({@code
 *       MemoryCgroup}), writes the report ({@code SeedReport}) and plot ({@code LatencyPlot}).
 * </ul>
 */
package io.shale.ops.seed;
