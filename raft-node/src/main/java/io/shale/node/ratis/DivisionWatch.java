package io.shale.node.ratis;

import io.shale.engine.concurrent.DaemonThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices when Ratis closes this node's Raft division on its own, outside a shutdown. Ratis does so
 * after an error it does not recover from in place (for example a log worker that fails to roll a
 * segment the purge of a snapshot install deleted first); the process stays up, but the group
 * refuses every request for good. {@code onLost} then runs once, on the watch's thread, with the
 * state seen; the node's main exits so that a supervisor restarts it on its data (as etcd exits on
 * a fatal Raft error). {@link #close} before closing Raft: a shutdown is not a loss.
 */
public final class DivisionWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DivisionWatch.class);

  /** Division states from which Ratis never returns to RUNNING. */
  static final Set<LifeCycle.State> LOST =
      EnumSet.of(LifeCycle.State.EXCEPTION, LifeCycle.State.CLOSING, LifeCycle.State.CLOSED);

  /** What a division looks like to the watch: its lifecycle state, or an error if it is gone. */
  public interface Source {
    LifeCycle.State state() throws IOException;
  }

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("division-watch"));
  private final AtomicBoolean fired = new AtomicBoolean();
  private volatile boolean closing;
  private volatile Source source;
  private volatile Consumer<String> onLost;

  /** The state of {@code server}'s division of {@code group}. */
  public static Source of(RaftServer server, RaftGroupId group) {
    return () -> server.getDivision(group).getInfo().getLifeCycleState();
  }

  /** Checks {@code source} every {@code period} until closed or lost. */
  public void start(Source source, Duration period, Consumer<String> onLost) {
    this.source = source;
    this.onLost = onLost;
    long ms = Math.max(1, period.toMillis());
    timer.scheduleWithFixedDelay(this::check, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** One look at the division (the timer's task; tests call it directly). */
  void check() {
    if (closing || fired.get() || source == null) {
      return;
    }
    LifeCycle.State state;
    try {
      state = source.state();
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not read the Raft division's state: {}", e.toString());
      return;
    }
    if (!LOST.contains(state) || closing || !fired.compareAndSet(false, true)) {
      return;
    }
    String why = "Ratis moved the Raft division to " + state + " outside a shutdown";
    LOG.error("{}: this node can no longer take part in its Raft group", why);
    onLost.accept(why);
  }

  /** True once {@code onLost} has run. */
  public boolean lost() {
    return fired.get();
  }

  @Override
  public void close() {
    closing = true;
    timer.shutdownNow();
  }
}
