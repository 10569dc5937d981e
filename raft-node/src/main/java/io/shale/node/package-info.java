/**
 * The Shale server: an Apache Ratis state machine over the storage engine ({@code
 * io.shale.node.statemachine}), snapshots as engine checkpoints ({@code io.shale.node.snapshot}),
 * write pressure across replicas ({@code io.shale.node.pressure}), the public gRPC API ({@code
 * io.shale.node.api}), workarounds for Ratis behaviours ({@code io.shale.node.ratis}), meters
 * ({@code io.shale.node.metrics}) and the node process with its configuration and HTTP endpoints
 * ({@code io.shale.node.server}).
 */
package io.shale.node;
