/**
 * Raft snapshots as engine checkpoints, and their transfer to a follower behind the leader's purged
 * log.
 *
 * <p>A snapshot is a checkpoint directory of hard links to immutable engine files ({@link
 * io.shale.node.snapshot.CheckpointStore}). Ratis runs in its notification mode: instead of
 * streaming files itself, the leader tells a lagging follower where its log starts, and the
 * follower's state machine fetches the leader's checkpoint over the node-to-node {@code
 * SnapshotTransfer} gRPC service ({@link io.shale.node.snapshot.SnapshotFetcher}), copying only the
 * files it does not already hold with the same name, size and SHA-256, into a staging directory
 * that replaces the engine directory atomically ({@link io.shale.node.snapshot.StagedInstall}) when
 * Ratis reloads the state machine. How the follower gets through Ratis's hand-off (reload only on a
 * leader's next notification) whatever the leaders do meanwhile: {@link
 * io.shale.node.snapshot.LeaderWatch} and {@link io.shale.node.snapshot.InstallHandoff}. Besides
 * Ratis's trigger by entry count, {@link io.shale.node.snapshot.LogSizeSnapshots} takes one when
 * the log outgrows its byte bound.
 */
package io.shale.node.snapshot;
