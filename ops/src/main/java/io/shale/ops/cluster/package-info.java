/**
 * The cluster benchmark: a 3-node Shale cluster and a 3-member etcd 3.4 cluster, each as local
 * processes on loopback with their data on the same disk and fsync on, driven by the same
 * closed-loop harness (puts and linearizable gets at fixed concurrency, HdrHistogram latencies).
 */
package io.shale.ops.cluster;
