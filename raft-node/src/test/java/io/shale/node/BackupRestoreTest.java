package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.backup.BackupCorruptException;
import io.shale.client.backup.BackupManifest;
import io.shale.client.backup.BackupSave;
import io.shale.client.backup.BackupVerifier;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.Restore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Backups of a real 3-node cluster under writes, restored into a fresh 3-node cluster: the new
 * cluster serves exactly the backup's content, an incremental chain restores to its last backup, a
 * flipped byte is reported with its file and offset, and a restored node cannot join the cluster
 * the backup came from.
 */
class BackupRestoreTest extends ThreeNodeClusterTest {
  private static final BackupSave.Progress QUIET = (files, of, bytes, ofBytes) -> {};

  @Test
  void aBackupTakenUnderWritesRestoresExactlyItsIndex() throws Exception {
    // A term above 1, as in any cluster that has lived: the restored cluster's Raft log starts
    // after entries of that term.
    String leader = cluster.leader();
    client.cluster().transferLeadership(leader.equals("n1") ? "n2" : "n1");
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger acked = new AtomicInteger();
    Thread writer =
        new Thread(
            () -> {
              for (int i = 0; !stop.get(); i++) {
                client.put(key(i), "v" + i);
                acked.set(i + 1);
              }
            });
    writer.start();
    await(() -> acked.get() >= 200, Duration.ofSeconds(30), "200 writes before the backup");
    int ackedBeforeBackup = acked.get();
    List<int[]> progress = new ArrayList<>();
    BackupSave.Result r =
        client.backup(
            dir.resolve("backup"), null, (f, of, b, ofB) -> progress.add(new int[] {f, of}));
    int ackedAfterBackup = acked.get();
    await(() -> acked.get() >= ackedAfterBackup + 100, Duration.ofSeconds(30), "writes after it");
    stop.set(true);
    writer.join();

    BackupManifest m = r.manifest();
    assertThat(m.cluster()).isEqualTo("test-cluster");
    assertThat(m.term()).isGreaterThan(1);
    assertThat(r.filesFetched()).isEqualTo(m.files().size());
    assertThat(progress).isNotEmpty();
    assertThat(progress.get(progress.size() - 1)[0]).isEqualTo(m.files().size());
    BackupManifest read = BackupVerifier.verify(dir.resolve("backup"));
    assertThat(read.index()).isEqualTo(m.index());
    assertThat(read.files())
        .extracting(BackupManifest.FileInfo::name)
        .containsExactlyElementsOf(m.files().stream().map(BackupManifest.FileInfo::name).toList());

    // What the original cluster holds, with each key's index: the backup's content is exactly the
    // keys written at or before its index.
    Map<String, String> expected = new TreeMap<>();
    int after = 0;
    for (int i = 0; i < acked.get(); i++) {
      Entry e = client.get(key(i));
      assertThat(e).as(key(i)).isNotNull();
      if (e.modIndex() <= m.index()) {
        expected.put(key(i), e.valueUtf8());
      } else {
        after++;
      }
    }
    assertThat(expected.size()).isGreaterThanOrEqualTo(ackedBeforeBackup);
    assertThat(after).as("keys written after the backup's index").isPositive();

    try (LocalCluster fresh = restoreThreeNodes(dir.resolve("backup"), "restored-cluster");
        ShaleClient c = clientOf(fresh)) {
      fresh.leader();
      assertThat(contents(c)).isEqualTo(expected);
      c.put("after-restore", "yes");
      Entry e = c.get("after-restore");
      assertThat(e.valueUtf8()).isEqualTo("yes");
      assertThat(e.modIndex()).isGreaterThan(m.index());
    }
  }

  @Test
  void anIncrementalChainCopiesOnlyNewFilesAndRestoresToItsLast() throws Exception {
    for (int i = 0; i < 300; i++) {
      client.put(key(i), "full-" + i);
    }
    BackupSave.Result full = client.backup(dir.resolve("b1"), null, QUIET);
    for (int i = 300; i < 600; i++) {
      client.put(key(i), "second-" + i);
    }
    BackupSave.Result second = client.backup(dir.resolve("b2"), dir.resolve("b1"), QUIET);
    for (int i = 0; i < 100; i++) {
      client.put(key(i), "third-" + i);
    }
    client.delete(key(599));
    BackupSave.Result third = client.backup(dir.resolve("b3"), dir.resolve("b2"), QUIET);

    assertThat(second.filesLinked()).as("tables shared with the full backup").isPositive();
    assertThat(third.filesLinked()).isPositive();
    assertThat(second.bytesFetched()).isLessThan(second.manifest().bytes());
    assertThat(third.manifest().index()).isGreaterThan(second.manifest().index());
    for (String b : List.of("b1", "b2", "b3")) {
      BackupVerifier.verify(dir.resolve(b));
    }
    assertThat(full.filesLinked()).isZero();

    Map<String, String> expected = contents(client);
    try (LocalCluster fresh = restoreThreeNodes(dir.resolve("b3"), "from-b3");
        ShaleClient c = clientOf(fresh)) {
      fresh.leader();
      Map<String, String> got = contents(c);
      assertThat(got).isEqualTo(expected);
      assertThat(got).doesNotContainKey(key(599)).containsEntry(key(5), "third-5");
    }
  }

  @Test
  void aFlippedByteIsReportedWithItsFileAndOffsetAndRefusedByRestore() throws Exception {
    for (int i = 0; i < 2000; i++) {
      client.put(key(i), "x".repeat(500) + i);
    }
    Path backup = dir.resolve("backup");
    BackupManifest m = client.backup(backup, null, QUIET).manifest();
    BackupManifest.FileInfo largest =
        m.files().stream().max(Comparator.comparingLong(BackupManifest.FileInfo::size)).get();
    Path file = backup.resolve("files").resolve(largest.name());
    long offset = largest.size() / 2;
    flip(file, offset);

    assertThatThrownBy(() -> BackupVerifier.verify(backup))
        .isInstanceOf(BackupCorruptException.class)
        .hasMessageContaining(largest.name())
        .satisfies(
            e -> {
              BackupCorruptException c = (BackupCorruptException) e;
              assertThat(c.file()).isEqualTo(file);
              long block = offset / BackupManifest.BLOCK_BYTES * BackupManifest.BLOCK_BYTES;
              assertThat(c.offset()).isEqualTo(block);
            });
    assertThatThrownBy(() -> Restore.restore(backup, dir.resolve("r/n1"), "other"))
        .isInstanceOf(BackupCorruptException.class);
    assertThat(dir.resolve("r/n1")).doesNotExist();

    flip(file, offset); // back as it was
    BackupVerifier.verify(backup);
    flip(backup.resolve("BACKUP"), 20);
    assertThatThrownBy(() -> BackupVerifier.verify(backup))
        .isInstanceOf(BackupCorruptException.class)
        .hasMessageContaining("BACKUP");
  }

  @Test
  void aRestoredNodeCannotJoinTheClusterItCameFrom() throws Exception {
    client.put("k", "v");
    Path backup = dir.resolve("backup");
    client.backup(backup, null, QUIET);

    assertThatThrownBy(() -> Restore.restore(backup, dir.resolve("same/n1"), "test-cluster"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a new name");
    Files.createDirectories(dir.resolve("busy/n1"));
    Files.writeString(dir.resolve("busy/n1/something"), "x");
    assertThatThrownBy(() -> Restore.restore(backup, dir.resolve("busy/n1"), "new"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not empty");

    Path restored = dir.resolve("restored");
    for (String id : List.of("n1", "n2", "n3")) {
      Restore.restore(backup, restored.resolve(id), "new-cluster");
    }
    // Started under the old cluster's name (its Raft group), a restored node refuses to start.
    assertThatThrownBy(() -> LocalCluster.named(restored, 3, "test-cluster"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("belongs to cluster \"new-cluster\"");
    // And the original cluster goes on, unaffected.
    client.put("k2", "v2");
    assertThat(client.get("k2").valueUtf8()).isEqualTo("v2");
  }

  /** A 3-node cluster named {@code name}, every node restored from {@code backup}, started. */
  private LocalCluster restoreThreeNodes(Path backup, String name) throws Exception {
    Path restored = dir.resolve("restored-" + name);
    for (String id : List.of("n1", "n2", "n3")) {
      Restore.restore(backup, restored.resolve(id), name);
    }
    return LocalCluster.named(restored, 3, name);
  }

  private static String key(int i) {
    return String.format("w/%06d", i);
  }

  private static ShaleClient clientOf(LocalCluster c) {
    return ShaleClient.builder()
        .endpoints(c.apiEndpoints().toArray(String[]::new))
        .deadline(Duration.ofSeconds(30))
        .build();
  }

  private static Map<String, String> contents(ShaleClient c) {
    Map<String, String> out = new TreeMap<>();
    for (Entry e : c.scan("w/", "w0")) {
      out.put(e.keyUtf8(), e.valueUtf8());
    }
    return out;
  }

  private static void flip(Path file, long offset) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.flip();
      b.put(0, (byte) (b.get(0) ^ 0x5A));
      ch.write(b, offset);
    }
  }
}
