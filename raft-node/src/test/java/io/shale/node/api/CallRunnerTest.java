package io.shale.node.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Empty;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Blocking calls run on the handler pool ({@code limits.handler_threads} platform threads) or, with
 * {@code limits.virtual_handlers}, each on a virtual thread of its own: then as many wait at once
 * as the in-flight limit admits.
 */
class CallRunnerTest {
  private static final int HANDLER_THREADS = 2;
  private static final int CALLS = 200;

  private static CallRunner runner(boolean virtual) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    return new CallRunner(
        "n1",
        new CallRunner.Admission(1024, 64L << 20, HANDLER_THREADS, virtual),
        new StatusMapper("n1", registry),
        registry);
  }

  /** Collects what a call answered. */
  private static final class Answers<T> implements StreamObserver<T> {
    final ConcurrentLinkedQueue<Object> values = new ConcurrentLinkedQueue<>();
    final CountDownLatch done;

    Answers(int calls) {
      done = new CountDownLatch(calls);
    }

    @Override
    public void onNext(T value) {
      values.add(value);
    }

    @Override
    public void onError(Throwable t) {
      values.add(t);
      done.countDown();
    }

    @Override
    public void onCompleted() {
      done.countDown();
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void callsRunOnTheThreadsConfigured(boolean virtual) throws Exception {
    try (CallRunner calls = runner(virtual)) {
      Answers<Boolean> out = new Answers<>(1);
      calls.serve(out, Empty.getDefaultInstance(), () -> Thread.currentThread().isVirtual());
      assertThat(out.done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(out.values).containsExactly(virtual);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void blockedCallsWaitTogetherOnlyOnVirtualThreads(boolean virtual) throws Exception {
    try (CallRunner calls = runner(virtual)) {
      CountDownLatch release = new CountDownLatch(1);
      AtomicInteger waiting = new AtomicInteger();
      AtomicInteger mostWaiting = new AtomicInteger();
      Answers<Integer> out = new Answers<>(CALLS);
      for (int i = 0; i < CALLS; i++) {
        calls.serve(
            out,
            Empty.getDefaultInstance(),
            () -> {
              mostWaiting.accumulateAndGet(waiting.incrementAndGet(), Math::max);
              try {
                release.await(); // a call waiting on Raft
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              waiting.decrementAndGet();
              return 1;
            });
      }
      int expected = virtual ? CALLS : HANDLER_THREADS;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (waiting.get() < expected && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(waiting.get()).isEqualTo(expected);
      release.countDown();
      assertThat(out.done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(out.values).hasSize(CALLS).allMatch(v -> v.equals(1));
      assertThat(mostWaiting.get()).isEqualTo(expected);
    }
  }
}
