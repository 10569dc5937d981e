/**
 * Benchmarks. {@link io.shale.ops.bench.EngineBench} runs the Shale storage engine and RocksDB
 * (through rocksdbjni) side by side in one JVM, configured alike, on the same request sequences,
 * and prints a markdown table of throughput and latency ratios. Run it with {@code
 * ops/bin/engine-bench}; {@code docs/benchmarks.md} explains the setup and the results.
 */
package io.shale.ops.bench;
