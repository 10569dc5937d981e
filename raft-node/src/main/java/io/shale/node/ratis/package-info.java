/**
 * Every workaround for a behaviour of Apache Ratis 3.3.0, in one place. Each class names the Ratis
 * behaviour, the report in {@code docs/upstream/}, and the test that shows why it is needed:
 *
 * <ul>
 *   <li>{@link io.shale.node.ratis.LeftoverSenders}: a leader elected in the middle of a membership
 *       change keeps a log sender for the removed peer; it steps down ({@code LeftoverSendersTest};
 *       docs/upstream/ratis-leader-elected-mid-change-keeps-removed-sender.md).
 *   <li>{@link io.shale.node.ratis.RaftRecipientCheck}: Ratis accepts Raft messages addressed to
 *       another server id (a node restarted empty at an old address); they are refused ({@code
 *       RaftRecipientCheckTest}).
 *   <li>{@link io.shale.node.ratis.StrandedInstallWatch}: Ratis reloads a fetched snapshot only on
 *       a leader's next notification, which may never come ({@code InstallAcrossLeaderChangeTest};
 *       docs/upstream/ratis-install-reload-waits-for-a-notification.md).
 *   <li>{@link io.shale.node.ratis.DivisionWatch}: Ratis may close a division on its own (a log
 *       worker's roll failing on a segment that an install's purge deleted) and leave the process
 *       up, serving nothing; the node exits so that a supervisor restarts it ({@code
 *       DivisionWatchTest}).
 *   <li>{@link io.shale.node.ratis.ForwardingClient}: a Ratis client whose one write used up its
 *       retries refuses every later write for good (its ordered stream closes); the node's client
 *       to the leader is then replaced ({@code ForwardingClientTest};
 *       docs/upstream/ratis-client-ordered-stream-never-reopens.md).
 *   <li>{@link io.shale.node.ratis.PromptCommitAppender} (installed by {@link
 *       io.shale.node.ratis.PromptCommitRpc}): Ratis's leader tells a follower of a commit only
 *       with the next entry or heartbeat, so with sparse writes followers applied, answered reads
 *       and delivered watch events up to half an election timeout late; the leader now sends the
 *       commit index within {@code raft.commit_update_delay} ({@code PromptCommitAppenderTest};
 *       docs/upstream/ratis-commit-waits-for-heartbeat.md).
 * </ul>
 *
 * <p>Elsewhere, by Ratis's contract rather than a defect: {@code ShaleStateMachine} overrides
 * {@code queryStale} (the base class may wait for ever) and implements {@code pause} and {@code
 * reinitialize}; {@code ClusterService} probes a new member before Ratis stages it
 * (docs/upstream/ratis-staging-never-times-out-under-load.md). {@code RatisVersionTest} fails when
 * the Ratis version changes, so that each of these is looked at again.
 */
package io.shale.node.ratis;
