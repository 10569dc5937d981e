/**
 * Write backpressure and the background I/O budget.
 *
 * <p>{@link io.shale.engine.pressure.WritePressure} is the engine's answer to "how far behind is
 * compaction?", computed after every flush and compaction from level-0 files, pending compaction
 * bytes and sealed memtables against {@code [lsm.write_pressure]}. Between a slowdown and a stop
 * threshold writes are delayed by an amount that grows linearly with the distance covered; at a
 * stop threshold they fail at once with {@link io.shale.engine.pressure.WriteThrottledException}.
 * The seed's lesson: a clean, early error beats an engine that grows L0 until it falls over.
 *
 * <p>{@link io.shale.engine.pressure.IoBudget} limits the bytes per second background work may read
 * and write (the seed's "compaction budget"), relaxing itself as pressure rises so that the budget
 * itself never drives writes into a stop.
 */
package io.shale.engine.pressure;
