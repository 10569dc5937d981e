/**
 * Iteration over internal entries. Every source (memtable, table, level) exposes an {@link
 * io.shale.engine.iterator.InternalIterator} that walks in one direction fixed at creation; {@link
 * io.shale.engine.iterator.MergingIterator} merges sources, and {@link
 * io.shale.engine.iterator.VisibleEntryIterator} turns the merged stream of versions into the
 * user's view (one live value per key, at a sequence bound, inside a range).
 *
 * <p>Reverse iterators are built as reverse iterators (user key descending, sequence ascending)
 * instead of being stepped backwards, which keeps every source simple.
 */
package io.shale.engine.iterator;
