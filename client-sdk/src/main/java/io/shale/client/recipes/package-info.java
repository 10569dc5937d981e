/**
 * Coordination recipes built on the public client API only (leases, transactions, watches), as
 * etcd's concurrency package is on etcd's: a {@link io.shale.client.recipes.Session} (a lease kept
 * alive), a {@link io.shale.client.recipes.Lock} and a leader {@link
 * io.shale.client.recipes.Election} on it, and a {@link io.shale.client.recipes.WatchCache} of a
 * prefix kept current by a watch.
 */
package io.shale.client.recipes;
