package io.shale.node.pressure;

import io.shale.engine.pressure.WritePressure;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The leader's view of every replica's engine write pressure: its own, read when asked, and the
 * latest report of each other node, kept with the time it arrived. A report older than {@code
 * maxAge} (2 s by default) is ignored, so a node that stopped answering does not hold writes back
 * forever (a node that is down is Raft's business, not backpressure's). Thread-safe.
 */
public final class ReplicaPressure {
  /** The worst pressure among the replicas and the node it is on. */
  public record Worst(String node, WritePressure pressure) {}

  private record Report(WritePressure pressure, long atNanos) {}

  private final String self;
  private final Supplier<WritePressure> local;
  private final long maxAgeNanos;
  private final Map<String, Report> reports = new ConcurrentHashMap<>();

  public ReplicaPressure(String self, Supplier<WritePressure> local, Duration maxAge) {
    this.self = self;
    this.local = local;
    this.maxAgeNanos = maxAge.toNanos();
  }

  public void report(String node, WritePressure pressure) {
    reports.put(node, new Report(pressure, System.nanoTime()));
  }

  /** Drops the report of a node that left the configuration. */
  public void forget(String node) {
    reports.remove(node);
  }

  /** This node's pressure and the fresh reports of the others, this node first. */
  public java.util.List<Worst> fresh() {
    java.util.List<Worst> out = new java.util.ArrayList<>();
    out.add(new Worst(self, local.get()));
    long now = System.nanoTime();
    for (Map.Entry<String, Report> r : reports.entrySet()) {
      if (now - r.getValue().atNanos() <= maxAgeNanos) {
        out.add(new Worst(r.getKey(), r.getValue().pressure()));
      }
    }
    return out;
  }

  /** The worst of this node's pressure and the fresh reports of the others. */
  public Worst worst() {
    Worst worst = new Worst(self, local.get());
    long now = System.nanoTime();
    for (Map.Entry<String, Report> r : reports.entrySet()) {
      if (now - r.getValue().atNanos() <= maxAgeNanos
          && r.getValue().pressure().worseThan(worst.pressure())) {
        worst = new Worst(r.getKey(), r.getValue().pressure());
      }
    }
    return worst;
  }
}
