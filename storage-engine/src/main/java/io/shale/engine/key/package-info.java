/**
 * Keys as the engine sees them. A user key is an arbitrary byte string ordered by unsigned
 * lexicographic comparison. An internal key adds the sequence number (the Raft index of the batch
 * that wrote it) and the kind of entry; internal keys order by user key ascending, then sequence
 * descending, so the newest version of a key is met first when scanning forward.
 */
package io.shale.engine.key;
