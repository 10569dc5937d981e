package io.shale.node.api;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds what one node holds for requests it has accepted and not yet answered: at most {@code
 * maxRequests} requests and {@code maxBytes} bytes of writes ({@code limits.max_inflight_requests},
 * {@code limits.max_inflight_write_bytes}). A request that does not fit is refused at once, before
 * it queues anywhere, so a burst of large writes costs the node bounded memory and the client a
 * RESOURCE_EXHAUSTED with a retry-after instead of a node out of memory.
 *
 * <p>Invariant: {@code requests <= maxRequests} and {@code bytes <= maxBytes}, except that one
 * request is always admitted when nothing is in flight (so a write larger than the byte budget
 * still goes through alone). Every acquired {@link Permit} is closed exactly once.
 */
final class InflightLimit {
  private final int maxRequests;
  private final long maxBytes;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();

  InflightLimit(int maxRequests, long maxBytes, MeterRegistry registry, String node) {
    this.maxRequests = maxRequests;
    this.maxBytes = maxBytes;
    Gauge.builder("shale.inflight.requests", requests, AtomicLong::get)
        .tag("node", node)
        .register(registry);
    Gauge.builder("shale.inflight.write.bytes", bytes, AtomicLong::get)
        .tag("node", node)
        .register(registry);
  }

  /** Held from acceptance to answer. */
  final class Permit implements AutoCloseable {
    private final long size;
    private boolean closed;

    private Permit(long size) {
      this.size = size;
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        bytes.addAndGet(-size);
        requests.decrementAndGet();
      }
    }
  }

  /** A permit for a request of {@code size} bytes, or null when the node is full. */
  Permit tryAcquire(long size) {
    long r = requests.incrementAndGet();
    long b = bytes.addAndGet(size);
    if (r > 1 && (r > maxRequests || b > maxBytes)) {
      bytes.addAndGet(-size);
      requests.decrementAndGet();
      return null;
    }
    return new Permit(size);
  }

  int maxRequests() {
    return maxRequests;
  }

  long maxBytes() {
    return maxBytes;
  }
}
