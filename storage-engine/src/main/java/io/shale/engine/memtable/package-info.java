/**
 * The memtable: the sorted in-memory buffer every write lands in first. Under Raft it is the only
 * copy of recent writes besides the Raft log, so the engine records with each flush the highest
 * index whose effects reached an SSTable.
 */
package io.shale.engine.memtable;
