/**
 * The Shale server: an Apache Ratis state machine over the storage engine, the gRPC KV API and the
 * node's metrics endpoints. Not built yet; the engine ({@code io.shale.engine}) comes first.
 */
package io.shale.node;
