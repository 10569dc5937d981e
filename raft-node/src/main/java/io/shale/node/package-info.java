/**
 * The Shale server: an Apache Ratis state machine over the storage engine
 * ({@code io.shale.node.statemachine}), the node around it ({@code io.shale.node.server}); the
 * gRPC KV API and the node's metrics endpoints are still to come (issue 5).
 */
package io.shale.node;
