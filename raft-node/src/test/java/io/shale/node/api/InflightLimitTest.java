package io.shale.node.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class InflightLimitTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void requestsAndBytesAreBoundedAndReleased() {
    InflightLimit limit = new InflightLimit(3, 100, registry, "n1");
    InflightLimit.Permit a = limit.tryAcquire(40);
    InflightLimit.Permit b = limit.tryAcquire(40);
    assertThat(a).isNotNull();
    assertThat(b).isNotNull();
    assertThat(limit.tryAcquire(40)).as("over the byte budget").isNull();
    InflightLimit.Permit c = limit.tryAcquire(10);
    assertThat(c).isNotNull();
    assertThat(limit.tryAcquire(0)).as("over the request budget").isNull();
    a.close();
    a.close(); // closing twice releases once
    assertThat(registry.get("shale.inflight.requests").gauge().value()).isEqualTo(2);
    assertThat(registry.get("shale.inflight.write.bytes").gauge().value()).isEqualTo(50);
    assertThat(limit.tryAcquire(50)).isNotNull();
  }

  @Test
  void oneRequestLargerThanTheBudgetGoesThroughAlone() {
    InflightLimit limit = new InflightLimit(10, 100, registry, "n1");
    InflightLimit.Permit big = limit.tryAcquire(1_000);
    assertThat(big).isNotNull();
    assertThat(limit.tryAcquire(1)).isNull();
    big.close();
    assertThat(limit.tryAcquire(1)).isNotNull();
  }

  @Test
  void concurrentCallersNeverExceedTheBoundsTogether() throws Exception {
    InflightLimit limit = new InflightLimit(8, 1_000, registry, "n1");
    AtomicLong held = new AtomicLong();
    AtomicLong maxHeld = new AtomicLong();
    AtomicInteger count = new AtomicInteger();
    AtomicInteger maxCount = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      Thread th =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 20_000; i++) {
                  InflightLimit.Permit p = limit.tryAcquire(300);
                  if (p != null) {
                    maxHeld.accumulateAndGet(held.addAndGet(300), Math::max);
                    maxCount.accumulateAndGet(count.incrementAndGet(), Math::max);
                    held.addAndGet(-300);
                    count.decrementAndGet();
                    p.close();
                  }
                }
              });
      th.start();
      threads.add(th);
    }
    start.countDown();
    for (Thread th : threads) {
      th.join();
    }
    assertThat(maxHeld.get()).isLessThanOrEqualTo(1_000);
    assertThat(maxCount.get()).isLessThanOrEqualTo(3);
  }
}
