/**
 * The memtable: the sorted in-memory buffer every write lands in first. Under Raft it is the only
 * copy of recent writes besides the Raft log, so the engine records with each flush the highest
 * index whose effects reached an SSTable.
 *
 * <p>{@link io.shale.engine.memtable.Memtable} is one memtable, ordered by a {@link
 * io.shale.engine.memtable.SkipList} that lives in the memtable's {@link
 * io.shale.engine.memtable.Arena}; {@link io.shale.engine.memtable.MemtableList} owns the mutable
 * and sealed memtables, publishes the {@link io.shale.engine.memtable.ReadState} readers use, and
 * lends the arenas chunks from its {@link io.shale.engine.memtable.ChunkPool}.
 */
package io.shale.engine.memtable;
