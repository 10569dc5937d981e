package io.shale.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.compaction.TableOutput;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.ValueKind;
import io.shale.engine.memtable.Memtable;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableCache;
import io.shale.engine.sstable.TableWriteOptions;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One level's files read as one sorted run: across file boundaries, both ways, with seeks. */
class LevelIteratorTest {
  @TempDir Path dir;
  private final AtomicLong numbers = new AtomicLong();
  private TableCache cache;
  private final List<FileMetadata> files = new ArrayList<>();

  @BeforeEach
  void buildLevel() throws IOException {
    cache = new TableCache(10, new BlockCache(1 << 20), n -> FileNames.table(dir, n), false);
    files.add(table("b", "c", "d"));
    files.add(table("f", "g"));
    files.add(table("k", "m", "n"));
  }

  @AfterEach
  void close() {
    cache.close();
  }

  private FileMetadata table(String... keys) throws IOException {
    Memtable m = new Memtable(0);
    for (String k : keys) {
      m.add(k.getBytes(UTF_8), 1, ValueKind.VALUE, ("v" + k).getBytes(UTF_8));
    }
    TableOutput out =
        new TableOutput(
            numbers::incrementAndGet,
            n -> FileNames.table(dir, n),
            new TableWriteOptions(4096, 16, Compression.NONE),
            1,
            10,
            Long.MAX_VALUE,
            n -> {});
    try (InternalIterator it = m.iterator(Direction.FORWARD)) {
      return out.write(it, k -> false, null, () -> false).files().get(0);
    }
  }

  private List<String> walk(Direction d, String seek) {
    List<String> out = new ArrayList<>();
    try (InternalIterator it = new LevelIterator(files, cache, d)) {
      if (seek == null) {
        it.seekToFirst();
      } else {
        it.seek(seek.getBytes(UTF_8));
      }
      for (; it.valid(); it.next()) {
        out.add(new String(it.userKey(), UTF_8));
      }
    }
    return out;
  }

  @Test
  void walksEveryFileInOrderBothWays() {
    assertThat(walk(Direction.FORWARD, null))
        .containsExactly("b", "c", "d", "f", "g", "k", "m", "n");
    assertThat(walk(Direction.REVERSE, null))
        .containsExactly("n", "m", "k", "g", "f", "d", "c", "b");
  }

  @Test
  void seeksFindTheRightFileIncludingTheGapsBetweenFiles() {
    assertThat(walk(Direction.FORWARD, "e")).containsExactly("f", "g", "k", "m", "n");
    assertThat(walk(Direction.FORWARD, "g")).containsExactly("g", "k", "m", "n");
    assertThat(walk(Direction.FORWARD, "a")).hasSize(8);
    assertThat(walk(Direction.FORWARD, "z")).isEmpty();
    // Reverse seeks stop at the last key below the target.
    assertThat(walk(Direction.REVERSE, "h")).containsExactly("g", "f", "d", "c", "b");
    assertThat(walk(Direction.REVERSE, "f")).containsExactly("d", "c", "b");
    assertThat(walk(Direction.REVERSE, "b")).isEmpty();
  }

  @Test
  void valuesComeFromTheRightFile() {
    try (InternalIterator it = new LevelIterator(files, cache, Direction.FORWARD)) {
      it.seek("m".getBytes(UTF_8));
      assertThat(new String(it.value(), UTF_8)).isEqualTo("vm");
      assertThat(it.sequence()).isEqualTo(1);
    }
  }
}
