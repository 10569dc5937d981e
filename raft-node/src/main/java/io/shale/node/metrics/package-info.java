/**
 * The node's Micrometer meters beyond the engine's own: Raft state (role, term, commit and applied
 * index, leader changes, replication lag per follower), gRPC request latency by method and status,
 * and Ratis's own metrics bridged in. They are scraped in Prometheus text format from the node's
 * {@code /metrics} endpoint.
 */
package io.shale.node.metrics;
