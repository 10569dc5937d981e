/**
 * A guided tour of the storage engine: {@link io.shale.ops.demo.EngineDemo} loads a few hundred MiB
 * into a fresh engine, checks that a sample reads back, times point reads and short scans, and
 * prints what the engine did (levels, Bloom filter memory, flushes, compactions, block cache). Run
 * it with {@code ops/bin/engine-demo}.
 */
package io.shale.ops.demo;
