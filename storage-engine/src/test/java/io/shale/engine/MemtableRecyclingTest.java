package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memtables give their arena chunks back for reuse once flushed and unread. A reader that still
 * holds one (an open scan, a snapshot) must keep reading its own bytes while later memtables fill
 * recycled chunks.
 */
class MemtableRecyclingTest {
  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] value(int i, byte fill) {
    byte[] v = new byte[100];
    Arrays.fill(v, fill);
    System.arraycopy(key(i), 0, v, 0, key(i).length);
    return v;
  }

  @Test
  void anOpenScanKeepsReadingItsMemtableWhileLaterOnesReuseChunks() throws Exception {
    try (Engine e = Engine.open(dir, TestOptions.tiny())) {
      long index = 0;
      // Less than one 16 KiB memtable: everything the scan reads is in the mutable memtable.
      for (int i = 0; i < 100; i++) {
        e.apply(new WriteBatch().put(key(i), value(i, (byte) 'a')), ++index);
      }
      try (ScanIterator scan = e.scan(ScanOptions.all())) {
        assertThat(scan.next()).isTrue();
        // Overwrite every key many memtables over: each flushed memtable's chunks go back to
        // the pool and are filled again with 'z' values, except the one the scan holds.
        for (int round = 0; round < 40; round++) {
          for (int i = 0; i < 100; i++) {
            e.apply(new WriteBatch().put(key(i), value(i, (byte) 'z')), ++index);
          }
        }
        e.flush();
        int seen = 0;
        do {
          assertThat(scan.key()).isEqualTo(key(seen));
          assertThat(scan.value()).isEqualTo(value(seen, (byte) 'a'));
          seen++;
        } while (scan.next());
        assertThat(seen).isEqualTo(100);
      }
      assertThat(e.get(key(7))).isEqualTo(value(7, (byte) 'z'));
    }
  }
}
