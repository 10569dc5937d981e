/**
 * Write pressure across the replicas: every node's engine computes its own ({@code
 * io.shale.engine.pressure}); the leader polls the others ({@link
 * io.shale.node.pressure.PressurePoller}), keeps their latest reports ({@link
 * io.shale.node.pressure.ReplicaPressure}) and applies the worst before a write enters the log
 * ({@link io.shale.node.pressure.WriteAdmission}, which refuses with {@link
 * io.shale.node.pressure.WriteThrottledByReplica}).
 */
package io.shale.node.pressure;
