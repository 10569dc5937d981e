package io.shale.engine.sstable;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.FileReads;
import io.shale.engine.key.ValueKind;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Open tables keep their index blocks and filters in native memory under a budget: the cache closes
 * tables beyond it, a reader that holds an evicted table still reads it, memory is freed when the
 * last reference goes, and a read after that fails with an exception instead of reading freed
 * memory.
 */
class TableMemoryTest {
  private static final int TABLES = 8;
  private static final int KEYS = 2000;

  @TempDir Path dir;

  private Path table(long n) {
    return dir.resolve(String.format("%06d.sst", n));
  }

  private static byte[] key(long table, int i) {
    return String.format("t%02d-key-%06d", table, i).getBytes(UTF_8);
  }

  private void writeTables() throws IOException {
    for (long t = 1; t <= TABLES; t++) {
      TableBuilder b =
          new TableBuilder(table(t), new TableWriteOptions(1024, 16, Compression.LZ4), 1, 10);
      for (int i = 0; i < KEYS; i++) {
        b.add(key(t, i), 5, ValueKind.VALUE, ("value-" + i).getBytes(UTF_8));
      }
      b.finish();
    }
  }

  private long bytesOfOneTable() throws IOException {
    TableMemory m = new TableMemory(Long.MAX_VALUE);
    TableReader r =
        TableReader.open(table(1), 1, new BlockCache(0), false, false, new FileReads(), m);
    long bytes = m.bytes();
    assertThat(bytes).isEqualTo(r.filterMemoryBytes() + r.indexMemoryBytes()).isPositive();
    r.release();
    assertThat(m.bytes()).isZero();
    assertThat(m.openArenas()).isZero();
    return bytes;
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theCacheKeepsIndexesAndFiltersWithinTheBudget(boolean mmap) throws IOException {
    writeTables();
    long perTable = bytesOfOneTable();
    TableMemory memory = new TableMemory(3 * perTable + perTable / 2);
    TableCache cache =
        new TableCache(
            100, new BlockCache(1 << 20), this::table, mmap, new FileReads(), false, memory);
    for (int round = 0; round < 2; round++) {
      for (long t = 1; t <= TABLES; t++) {
        TableReader r = cache.acquire(t);
        assertThat(r.get(key(t, 7), Long.MAX_VALUE).value()).isEqualTo("value-7".getBytes(UTF_8));
        r.release();
        assertThat(memory.bytes())
            .as("native bytes after table %d", t)
            .isLessThanOrEqualTo(memory.budgetBytes());
        assertThat(cache.openTables()).isLessThanOrEqualTo(3);
        assertThat(memory.openArenas()).isEqualTo(cache.openTables());
      }
    }
    cache.close();
    assertThat(memory.openArenas()).isZero();
    assertThat(memory.bytes()).isZero();
  }

  @Test
  void aHeldTableOutlivesItsEvictionAndIsFreedWithItsLastReference() throws IOException {
    writeTables();
    long perTable = bytesOfOneTable();
    TableMemory memory = new TableMemory(perTable + perTable / 2);
    TableCache cache =
        new TableCache(
            100, new BlockCache(1 << 20), this::table, true, new FileReads(), false, memory);
    TableReader held = cache.acquire(1);
    for (long t = 2; t <= TABLES; t++) {
      cache.acquire(t).release();
    }
    // Table 1 left the cache long ago; its reader still works, on memory that is still counted.
    assertThat(cache.openTables()).isEqualTo(1);
    assertThat(memory.openArenas()).isEqualTo(2);
    assertThat(held.get(key(1, KEYS - 1), Long.MAX_VALUE).value())
        .isEqualTo(("value-" + (KEYS - 1)).getBytes(UTF_8));
    assertThat(held.mayContain(key(1, 3))).isTrue();
    held.release();
    assertThat(memory.openArenas()).isEqualTo(1);
    assertThat(memory.bytes()).isEqualTo(perTable);
    // A read through a reference already given back fails instead of touching freed memory.
    assertThatThrownBy(() -> held.get(key(1, 3), Long.MAX_VALUE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> held.mayContain(key(1, 3))).isInstanceOf(IllegalStateException.class);
    cache.close();
    assertThat(memory.openArenas()).isZero();
  }
}
