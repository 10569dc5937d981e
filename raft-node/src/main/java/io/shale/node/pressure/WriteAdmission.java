package io.shale.node.pressure;

import java.io.InterruptedIOException;
import java.time.Duration;

/**
 * The leader's decision for a write about to enter the log, from the worst pressure among the
 * replicas: admit it, admit it after the suggested delay (DELAYED), or refuse it (STOPPED) with a
 * {@link WriteThrottledByReplica} that names the node and the cause. A refused write never reaches
 * the log, so the leader does not step down for it.
 */
public final class WriteAdmission {
  /** Waits for a delay; tests pass one that records instead of sleeping. */
  public interface Sleeper {
    void sleep(Duration d) throws InterruptedException;
  }

  private final ReplicaPressure replicas;
  private final Sleeper sleeper;

  public WriteAdmission(ReplicaPressure replicas) {
    this(replicas, d -> Thread.sleep(d.toMillis()));
  }

  public WriteAdmission(ReplicaPressure replicas, Sleeper sleeper) {
    this.replicas = replicas;
    this.sleeper = sleeper;
  }

  /**
   * Null if the write may go on (after waiting when DELAYED), or the exception to refuse it with.
   *
   * @throws InterruptedIOException if interrupted while delaying
   */
  public WriteThrottledByReplica admit() throws InterruptedIOException {
    ReplicaPressure.Worst w = replicas.worst();
    switch (w.pressure().condition()) {
      case STOPPED -> {
        return new WriteThrottledByReplica(w.node(), w.pressure());
      }
      case DELAYED -> {
        try {
          sleeper.sleep(Duration.ofMillis(Math.max(1, w.pressure().suggestedDelay().toMillis())));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while delaying a write");
        }
        return null;
      }
      default -> {
        return null;
      }
    }
  }
}
