/**
 * What the engine tells its operator: Micrometer meters ({@link
 * io.shale.engine.metrics.EngineMetrics}), and the compaction event log ({@link
 * io.shale.engine.metrics.EventLog}), one JSON line per flush, compaction and blob GC with its
 * input and output files and their key, value and blob bytes. The seed: "adding [compaction byte
 * volume, split into key and value bytes] was the single most valuable hour of the quarter".
 */
package io.shale.engine.metrics;
