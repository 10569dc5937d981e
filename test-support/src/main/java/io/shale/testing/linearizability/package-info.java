/**
 * Linearizability checking of key-value histories: {@link
 * io.shale.testing.linearizability.Operation} records what clients did and saw, {@link
 * io.shale.testing.linearizability.LinearizabilityChecker} decides (Wing-Gong-Lowe search with
 * memoization, key by key), {@link io.shale.testing.linearizability.HistoryFile} saves a failing
 * history with its explanation.
 */
package io.shale.testing.linearizability;
