package io.shale.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Readers walk and probe the memtable while its one writer inserts. Every entry the writer had
 * finished before a reader started must be visible to it, complete and in order; entries added
 * meanwhile may or may not be, but never half-written.
 */
class MemtableConcurrencyTest {
  private static final int ENTRIES = 200_000;

  /** The value of entry {@code sequence}: derived from it, so a reader can check what it reads. */
  private static byte[] valueOf(long sequence) {
    int length = (int) (sequence % 97);
    byte[] v = new byte[length];
    for (int i = 0; i < length; i++) {
      v[i] = (byte) (sequence * 31 + i);
    }
    return v;
  }

  private static byte[] keyOf(long sequence) {
    // Many versions per key, keys of different lengths, inserted out of key order.
    long k = (sequence * 0x9E3779B97F4A7C15L >>> 40) % 5000;
    return ByteBuffer.allocate(2 + (int) (k % 7)).putShort((short) k).array();
  }

  @Test
  void readersSeeEveryFinishedEntryCompleteAndInOrderWhileTheWriterInserts() throws Exception {
    Memtable m = new Memtable(1);
    AtomicLong finished = new AtomicLong();
    CountDownLatch readersStarted = new CountDownLatch(3);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> readers = new ArrayList<>();
      for (Direction d : List.of(Direction.FORWARD, Direction.REVERSE)) {
        readers.add(
            pool.submit(
                () -> {
                  readersStarted.countDown();
                  int walks = 0;
                  while (finished.get() < ENTRIES) {
                    walkAndCheck(m, d, finished.get());
                    walks++;
                  }
                  return walks;
                }));
      }
      readers.add(
          pool.submit(
              () -> {
                readersStarted.countDown();
                SplittableRandom r = new SplittableRandom(7);
                int probes = 0;
                while (finished.get() < ENTRIES) {
                  long done = finished.get();
                  if (done == 0) {
                    continue;
                  }
                  long s = 1 + r.nextLong(done);
                  StoredValue v = m.get(keyOf(s), s);
                  assertThat(v).as("entry %d, finished before the probe", s).isNotNull();
                  assertThat(v.sequence()).isEqualTo(s);
                  assertThat(v.value()).isEqualTo(valueOf(s));
                  probes++;
                }
                return probes;
              }));
      assertThat(readersStarted.await(30, TimeUnit.SECONDS)).isTrue();
      for (long s = 1; s <= ENTRIES; s++) {
        m.add(keyOf(s), s, ValueKind.VALUE, valueOf(s));
        finished.set(s);
      }
      for (Future<Integer> f : readers) {
        assertThat(f.get(60, TimeUnit.SECONDS)).isPositive();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(m.entryCount()).isEqualTo(ENTRIES);
    walkAndCheck(m, Direction.FORWARD, ENTRIES);
  }

  /** One walk: strictly ordered, values intact, and every entry up to {@code finished} seen. */
  private static void walkAndCheck(Memtable m, Direction d, long finished) {
    int sign = d == Direction.FORWARD ? 1 : -1;
    long seenFinished = 0;
    byte[] prevKey = null;
    long prevSequence = 0;
    try (InternalIterator it = m.iterator(d)) {
      for (it.seekToFirst(); it.valid(); it.next()) {
        byte[] k = it.userKey();
        long s = it.sequence();
        assertThat(k).isEqualTo(keyOf(s));
        assertThat(it.value()).isEqualTo(valueOf(s));
        if (prevKey != null) {
          assertThat(sign * Keys.compareInternal(prevKey, prevSequence, k, s)).isNegative();
        }
        if (s <= finished) {
          seenFinished++;
        }
        prevKey = k;
        prevSequence = s;
      }
    }
    assertThat(seenFinished).isEqualTo(finished);
  }
}
