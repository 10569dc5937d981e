package io.shale.node.api;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Reply;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Group commit: batches (identified or not) that clients send at the same time travel as one Raft
 * log entry, so they share one consensus round and one fsync per replica. Up to {@code committers}
 * groups are in flight at once; when a write arrives and a slot is free, it leaves at once with
 * every write waiting behind it (up to {@code maxWrites} writes or {@code maxBytes} bytes), so a
 * lone write never waits for a group to fill, and grouping only happens when writes arrive faster
 * than one round trip. When a group's entry is applied, its writes are answered together on the
 * submitter's reply thread, which then sends the next group: no thread waits on Raft.
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

  /** Sends one log entry; the future completes with the state machine's reply. */
  @FunctionalInterface
  interface Submitter {
    CompletableFuture<Reply> submit(Command entry);
  }

  private record Pending(
      Command command, int bytes, CompletableFuture<Reply> reply, long queuedNanos) {}

  private final Submitter submitter;
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inFlight = new AtomicInteger();

  private volatile boolean closed;

  /** How long a write waited for a free slot, and how many writes each entry carried. */
  private final Timer queued;

  private final DistributionSummary groupSizes;

  GroupCommit(String name, Bounds bounds, Submitter submitter, MeterRegistry registry) {
    this.bounds = bounds;
    this.submitter = submitter;
    this.queued =
        Timer.builder("shale.group_commit.queued")
            .description("time a write waited for a free group slot")
            .tag("node", name)
            .register(registry);
    this.groupSizes =
        DistributionSummary.builder("shale.group_commit.writes")
            .description("writes per log entry sent by group commit")
            .tag("node", name)
            .register(registry);
  }

  /** Queues a batch, or an identified batch, for the next group. */
  CompletableFuture<Reply> submit(Command command, int bytes) {
    CompletableFuture<Reply> f = new CompletableFuture<>();
    if (closed) {
      f.completeExceptionally(new IOException("the node is shutting down"));
      return f;
    }
    queue.add(new Pending(command, bytes, f, System.nanoTime()));
    sendWhileSlotsFree();
    return f;
  }

  /**
   * Sends groups while writes wait and fewer than {@code committers} groups are in flight. Whoever
   * adds a write and whoever frees a slot both call this after their change, so a waiting write is
   * always sent by one of them.
   */
  private void sendWhileSlotsFree() {
    while (!queue.isEmpty()) {
      int n = inFlight.get();
      if (n >= bounds.committers()) {
        return; // the group that finishes next sends it
      }
      if (!inFlight.compareAndSet(n, n + 1)) {
        continue;
      }
      List<Pending> group = new ArrayList<>();
      long bytes = 0;
      Pending next;
      while (group.size() < bounds.maxWrites()
          && bytes < bounds.maxBytes()
          && (next = queue.poll()) != null) {
        group.add(next);
        bytes += next.bytes();
      }
      if (group.isEmpty()) {
        inFlight.decrementAndGet();
        continue;
      }
      send(group);
    }
  }

  private void send(List<Pending> group) {
    long now = System.nanoTime();
    for (Pending p : group) {
      queued.record(now - p.queuedNanos(), TimeUnit.NANOSECONDS);
    }
    groupSizes.record(group.size());
    CompletableFuture<Reply> sent;
    try {
      if (group.size() == 1) {
        sent = submitter.submit(group.get(0).command());
      } else {
        List<Command> commands = new ArrayList<>(group.size());
        for (Pending p : group) {
          commands.add(p.command());
        }
        sent = submitter.submit(new Command.Group(commands));
      }
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    // The submitter completes on its reply threads, never on a thread of Ratis.
    sent.whenComplete(
        (reply, e) -> {
          inFlight.decrementAndGet();
          answer(group, reply, e);
          sendWhileSlotsFree();
        });
  }

  private static void answer(List<Pending> group, Reply reply, Throwable e) {
    if (e != null) {
      for (Pending p : group) {
        p.reply().completeExceptionally(e);
      }
      return;
    }
    if (group.size() == 1 || !(reply instanceof Reply.Many many)) {
      // One write, or the whole entry rejected (alike on every replica): so is each write in it.
      for (Pending p : group) {
        p.reply().complete(reply);
      }
      return;
    }
    for (int i = 0; i < group.size(); i++) {
      group.get(i).reply().complete(Reply.decode(many.replies().get(i)));
    }
  }

  /** Fails what is still queued; in-flight groups finish. */
  @Override
  public void close() {
    closed = true;
    for (Pending p; (p = queue.poll()) != null; ) {
      p.reply().completeExceptionally(new IOException("the node is shutting down"));
    }
  }
}
