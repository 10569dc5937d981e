package io.shale.node.api;

import io.shale.engine.concurrent.DaemonThreads;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Reply;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Group commit: batches (identified or not) that clients send at the same time travel as one Raft
 * log entry, so they share one consensus round and one fsync per replica. A committer thread takes
 * the oldest waiting write, adds every write waiting behind it (up to {@code maxWrites} writes or
 * {@code maxBytes} bytes), submits the group and hands each write its own reply. {@code committers}
 * groups may be in flight at once, so a lone write never waits for a group to fill: it leaves at
 * once, and grouping only happens when writes arrive faster than one round trip.
 *
 * <p>Compare-and-sets and range deletes read state at apply time and are not grouped.
 */
public final class GroupCommit implements AutoCloseable {
  /**
   * How groups are formed ({@code raft.group_commit_*}).
   *
   * @param committers groups in flight at once
   * @param maxWrites writes in one group
   * @param maxBytes a group stops growing past this many bytes (one more write may push it over)
   */
  public record Bounds(int committers, int maxWrites, long maxBytes) {
    public Bounds {
      if (committers < 1 || maxWrites < 1 || maxBytes < 1) {
        throw new IllegalArgumentException(
            "group commit bounds must be positive: "
                + committers
                + ", "
                + maxWrites
                + ", "
                + maxBytes);
      }
    }
  }

  private final Bounds bounds;

  /** Sends one log entry and returns the state machine's reply (a failure is thrown). */
  @FunctionalInterface
  interface Submitter {
    Reply submit(Command entry) throws Exception;
  }

  private record Pending(Command command, int bytes, CompletableFuture<Reply> reply) {}

  private final Submitter submitter;
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
  private final List<Thread> committers = new ArrayList<>();
  private volatile boolean closed;

  GroupCommit(String name, Bounds bounds, Submitter submitter) {
    this.bounds = bounds;
    this.submitter = submitter;
    for (int i = 0; i < bounds.committers(); i++) {
      Thread t = DaemonThreads.newThread(this::run, name + "-group-commit-" + i);
      t.start();
      committers.add(t);
    }
  }

  /** Queues a batch, or an identified batch, for the next group. */
  CompletableFuture<Reply> submit(Command command, int bytes) {
    CompletableFuture<Reply> f = new CompletableFuture<>();
    if (closed) {
      f.completeExceptionally(new IOException("the node is shutting down"));
      return f;
    }
    queue.add(new Pending(command, bytes, f));
    return f;
  }

  private void run() {
    List<Pending> group = new ArrayList<>();
    while (!closed) {
      try {
        Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        group.clear();
        group.add(first);
        long bytes = first.bytes();
        Pending next;
        while (group.size() < bounds.maxWrites()
            && bytes < bounds.maxBytes()
            && (next = queue.poll()) != null) {
          group.add(next);
          bytes += next.bytes();
        }
        commit(group);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void commit(List<Pending> group) {
    try {
      if (group.size() == 1) {
        group.get(0).reply().complete(submitter.submit(group.get(0).command()));
        return;
      }
      List<Command> commands = new ArrayList<>(group.size());
      for (Pending p : group) {
        commands.add(p.command());
      }
      Reply reply = submitter.submit(new Command.Group(commands));
      if (!(reply instanceof Reply.Many many)) {
        // The whole entry was rejected (alike on every replica): so is each write in it.
        for (Pending p : group) {
          p.reply().complete(reply);
        }
        return;
      }
      for (int i = 0; i < group.size(); i++) {
        group.get(i).reply().complete(Reply.decode(many.replies().get(i)));
      }
    } catch (Exception e) {
      for (Pending p : group) {
        p.reply().completeExceptionally(e);
      }
    }
  }

  /** Fails what is still queued; in-flight groups finish. */
  @Override
  public void close() {
    closed = true;
    committers.forEach(Thread::interrupt);
    for (Pending p; (p = queue.poll()) != null; ) {
      p.reply().completeExceptionally(new IOException("the node is shutting down"));
    }
  }
}
