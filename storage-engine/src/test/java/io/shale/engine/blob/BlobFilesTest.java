package io.shale.engine.blob;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.io.FileReads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The open blob files are bounded, and evicting one never breaks a read that uses it. */
class BlobFilesTest {
  @TempDir Path dir;

  private Path path(long n) {
    return dir.resolve(n + ".blob");
  }

  /** Writes {@code files} blob files of {@code perFile} values; value i of file f is "f/i". */
  private List<List<BlobPointer>> write(int files, int perFile) throws Exception {
    List<List<BlobPointer>> out = new ArrayList<>();
    for (int f = 1; f <= files; f++) {
      BlobFileWriter w = new BlobFileWriter(path(f), f, bytes -> {});
      List<BlobPointer> ps = new ArrayList<>();
      for (int i = 0; i < perFile; i++) {
        ps.add(w.add(("k" + i).getBytes(StandardCharsets.UTF_8), value(f, i)));
      }
      w.finish();
      out.add(ps);
    }
    return out;
  }

  private static byte[] value(int f, int i) {
    return (f + "/" + i + "/" + "x".repeat(100)).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void atMostCapacityFilesStayOpenAndEveryValueReadsBack() throws Exception {
    List<List<BlobPointer>> ps = write(6, 20);
    try (BlobFiles blobs = new BlobFiles(this::path, 2)) {
      for (int round = 0; round < 3; round++) {
        for (int f = 1; f <= 6; f++) {
          for (int i = 0; i < 20; i++) {
            assertThat(blobs.read(ps.get(f - 1).get(i), FileReads.Cause.POINT_READ))
                .isEqualTo(value(f, i));
          }
          assertThat(blobs.openFiles()).isLessThanOrEqualTo(2);
        }
      }
    }
  }

  @Test
  void concurrentReadsSurviveEvictionsOfTheFilesTheyUse() throws Exception {
    List<List<BlobPointer>> ps = write(8, 50);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (BlobFiles blobs = new BlobFiles(this::path, 2)) {
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread th =
            new Thread(
                () -> {
                  ThreadLocalRandom rnd = ThreadLocalRandom.current();
                  try {
                    for (int n = 0; n < 5_000; n++) {
                      int f = rnd.nextInt(1, 9);
                      int i = rnd.nextInt(50);
                      byte[] v =
                          rnd.nextBoolean()
                              ? blobs.read(ps.get(f - 1).get(i), FileReads.Cause.POINT_READ)
                              : blobs.scanResolver(1 << 16).resolve(ps.get(f - 1).get(i));
                      if (!java.util.Arrays.equals(v, value(f, i))) {
                        throw new AssertionError("wrong value for " + f + "/" + i);
                      }
                      if (n % 97 == 0) {
                        blobs.evict(f);
                      }
                    }
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                });
        th.start();
        threads.add(th);
      }
      for (Thread th : threads) {
        th.join();
      }
      assertThat(failure.get()).isNull();
      assertThat(blobs.openFiles()).isLessThanOrEqualTo(2);
    }
  }
}
