package io.shale.engine.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.blob.BlobFiles;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.TableCache;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ObsoleteFilesTest {
  @TempDir Path dir;
  private TableCache tables;
  private BlobFiles blobs;
  private ObsoleteFiles obsolete;

  @BeforeEach
  void open() {
    tables = new TableCache(10, new BlockCache(1 << 20), n -> FileNames.table(dir, n), false);
    blobs = new BlobFiles(n -> FileNames.blob(dir, n));
    obsolete = new ObsoleteFiles(dir, tables, blobs);
  }

  @AfterEach
  void close() {
    obsolete.close();
    tables.close();
    blobs.close();
  }

  private Path touch(Path p) throws Exception {
    Files.write(p, new byte[] {1});
    return p;
  }

  @Test
  void theCallerDoesNotWaitForTheDeletion() throws Exception {
    Path table = touch(FileNames.table(dir, 7));
    Path blob = touch(FileNames.blob(dir, 8));
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    // Hold the table cache's lock, which the eviction before the unlink needs: a read releasing
    // the last version must still return at once.
    Thread holder =
        new Thread(
            () -> {
              synchronized (tables) {
                held.countDown();
                try {
                  letGo.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            });
    holder.start();
    assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
    obsolete.deleteTable(7);
    obsolete.deleteBlob(8);
    assertThat(table).exists();
    letGo.countDown();
    obsolete.awaitIdle();
    assertThat(table).doesNotExist();
    assertThat(blob).doesNotExist();
    holder.join();
  }

  @Test
  void closeFinishesWhatWasAskedAndDeletesNothingAfter() throws Exception {
    Path first = touch(FileNames.table(dir, 1));
    Path later = touch(FileNames.table(dir, 2));
    obsolete.deleteTable(1);
    obsolete.close();
    assertThat(first).doesNotExist();
    obsolete.deleteTable(2);
    obsolete.awaitIdle();
    assertThat(later).exists();
  }
}
