/**
 * The local cluster's demo workload ({@link io.shale.ops.local.LocalDemo}), run by {@code
 * ops/bin/shale-local up} through the SDK.
 */
package io.shale.ops.local;
