/**
 * Leveled compaction: what to compact next ({@link io.shale.engine.compaction.CompactionPicker},
 * ordered by {@link io.shale.engine.compaction.CompactionScore}) and doing it ({@link
 * io.shale.engine.compaction.CompactionJob}).
 *
 * <p>Design note: snapshots and iterators pin whole versions (their files stay on disk until they
 * close), so compaction never has to keep an old version of a key for a reader. It keeps exactly
 * the newest version of each key and drops a tombstone once no deeper level can hold an older
 * version of its key. The price is the seed's "old SSTable generations stick around for readers",
 * reported as {@code pinnedObsoleteBytes}.
 */
package io.shale.engine.compaction;
