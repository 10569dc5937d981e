package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReadaheadTest {
  private static final int FILE = 1 << 20;

  /** A 1 MiB "file" whose byte i is (i * 31) mod 251, recording the size of every read. */
  private static final class FakeFile implements Readahead.Source {
    final List<Integer> reads = new ArrayList<>();

    @Override
    public int read(long offset, ByteBuffer into, int needed) throws IOException {
      if (offset + needed > FILE) {
        throw new IOException("past the end: " + offset + "+" + needed);
      }
      int n = (int) Math.min(into.remaining(), FILE - offset);
      for (int i = 0; i < n; i++) {
        into.put(byteAt(offset + i));
      }
      reads.add(n);
      return n;
    }

    static byte byteAt(long i) {
      return (byte) ((i * 31) % 251);
    }
  }

  private static void assertBytes(byte[] b, int at, long offset, int length) {
    for (int i = 0; i < length; i++) {
      assertThat(b[at + i]).as("byte %d", offset + i).isEqualTo(FakeFile.byteAt(offset + i));
    }
  }

  @Test
  void randomReadsFetchExactlyTheirBytes() throws IOException {
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.adaptive(16 << 10, 256 << 10);
    SplittableRandom rnd = new SplittableRandom(1);
    long last = 0;
    for (int i = 0; i < 200; i++) {
      long off;
      do {
        off = rnd.nextLong(FILE - 4096);
      } while (off >= last && off - last <= (256 << 10)); // never just after the previous read
      byte[] b = new byte[4096];
      ra.read(7, off, b, 0, 4096, f);
      assertBytes(b, 0, off, 4096);
      last = off + 4096;
    }
    assertThat(f.reads).hasSize(200).allMatch(n -> n == 4096);
  }

  @Test
  void sequentialReadsGrowTheWindowUpToTheMaximum() throws IOException {
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.adaptive(16 << 10, 64 << 10);
    byte[] b = new byte[4000];
    for (long off = 0; off + 4000 <= FILE; off += 4000) {
      ra.read(3, off, b, 0, 4000, f);
      assertBytes(b, 0, off, 4000);
    }
    // Exact reads until the third sequential one, then 16, 32 KiB, then 64 KiB windows.
    assertThat(f.reads.subList(0, 5)).containsExactly(4000, 4000, 16 << 10, 32 << 10, 64 << 10);
    assertThat(f.reads.subList(4, f.reads.size() - 1)).allMatch(n -> n == 64 << 10);
    long total = f.reads.stream().mapToLong(Integer::longValue).sum();
    assertThat(total).isBetween((long) FILE - 4000, (long) FILE + (64 << 10));
    assertThat(ra.reads()).isEqualTo(f.reads.size()).isLessThan(25);
  }

  @Test
  void anotherFileOrAJumpBackStartsOverWithExactReads() throws IOException {
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.adaptive(16 << 10, 64 << 10);
    byte[] b = new byte[1000];
    ra.read(1, 0, b, 0, 1000, f);
    ra.read(1, 1000, b, 0, 1000, f); // sequential once: still exact
    ra.read(1, 2000, b, 0, 1000, f); // the second sequential read in a row: a 16 KiB window
    ra.read(2, 1000, b, 0, 1000, f); // another file: exact
    assertBytes(b, 0, 1000, 1000);
    ra.read(2, 2000, b, 0, 1000, f); // sequential once in file 2: exact
    ra.read(2, 500_000, b, 0, 1000, f); // a jump forward beyond the window: exact
    ra.read(2, 100, b, 0, 1000, f); // backwards: exact
    assertThat(f.reads).containsExactly(1000, 1000, 16 << 10, 1000, 1000, 1000, 1000);
  }

  @Test
  void aFixedWindowReadsAheadFromTheFirstReadAndStopsAtTheEnd() throws IOException {
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.fixed(300_000);
    byte[] b = new byte[10_000];
    for (long off = 0; off + 10_000 <= FILE; off += 10_000) {
      ra.read(9, off, b, 0, 10_000, f);
      assertBytes(b, 0, off, 10_000);
    }
    assertThat(f.reads).containsExactly(300_000, 300_000, 300_000, FILE - 900_000);
  }

  @Test
  void aReadPastTheEndIsTheSourcesError() {
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.fixed(64 << 10);
    assertThatThrownBy(() -> ra.read(1, FILE - 10, new byte[100], 0, 100, f))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("past the end");
  }

  /**
   * A compaction's window goes back to the thread's pool when its reader is done; the next reader
   * reuses the array and reads its own file's bytes, never the previous reader's.
   */
  @Test
  void aReleasedWindowIsReusedAndRefilled() throws IOException {
    DirectBuffers windows = new DirectBuffers(1 << 20);
    FakeFile f = new FakeFile();
    Readahead first = Readahead.fixed(64 << 10, windows);
    byte[] b = new byte[1000];
    first.read(1, 0, b, 0, 1000, f);
    first.release();
    assertThat(windows.keptBytes()).isEqualTo(64 << 10);

    Readahead second = Readahead.fixed(64 << 10, windows);
    second.read(1, 500_000, b, 0, 1000, f);
    assertBytes(b, 0, 500_000, 1000);
    assertThat(windows.keptBytes()).as("the window is in use again").isZero();
    second.read(1, 501_000, b, 0, 1000, f);
    assertBytes(b, 0, 501_000, 1000);
    assertThat(f.reads).containsExactly(64 << 10, 64 << 10);
  }

  /** A scan's growing windows come from the pool, and all go back to it when the scan restarts. */
  @Test
  void aScansWindowsGoBackToThePoolOnRestart() throws IOException {
    DirectBuffers windows = new DirectBuffers(1 << 20);
    FakeFile f = new FakeFile();
    Readahead ra = Readahead.adaptive(16 << 10, 64 << 10, windows);
    byte[] b = new byte[4096];
    for (long off = 0; off < 400_000; off += 4096) {
      ra.read(3, off, b, 0, 4096, f);
      assertBytes(b, 0, off, 4096);
    }
    assertThat(windows.keptBytes()).as("outgrown windows").isEqualTo((16 << 10) + (32 << 10));
    ra.restart(0);
    assertThat(windows.keptBytes()).isEqualTo((16 << 10) + (32 << 10) + (64 << 10));
    ra.read(3, 700_000, b, 0, 4096, f);
    assertBytes(b, 0, 700_000, 4096);
  }
}
