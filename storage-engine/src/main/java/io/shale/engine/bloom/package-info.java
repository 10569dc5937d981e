/**
 * Bloom filters, one per SSTable, sized by the level the table is written to ({@code [lsm.bloom]}:
 * 16 bits per key on level 0, 14 on level 1, 12 on level 2, 10 below).
 *
 * <p>Why per level: every point read probes the filters of the hot, shallow levels, and a false
 * positive there costs a data block read on the wrong file; deeper levels hold most keys, so their
 * filter memory matters more than their false-positive rate.
 */
package io.shale.engine.bloom;
