/**
 * A whole cluster in one JVM ({@link io.shale.node.local.LocalCluster}): real nodes, real Raft over
 * loopback gRPC, real files, on free ports. Shale's tests and the test-support module's JUnit
 * extension build on it.
 */
package io.shale.node.local;
