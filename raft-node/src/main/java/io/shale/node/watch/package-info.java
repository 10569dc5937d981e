/**
 * Watches: the {@link io.shale.node.watch.ChangeHistory} of changes this node applied lately, and
 * the {@link io.shale.node.watch.WatchService} that streams them to clients from a start index, in
 * index order, each index whole, with progress notifications; a watch resumes from its last index
 * on any node whose history still holds it.
 */
package io.shale.node.watch;
