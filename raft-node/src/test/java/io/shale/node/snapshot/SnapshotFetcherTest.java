package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.shale.engine.blob.BlobFileWriter;
import io.shale.node.snapshot.proto.CheckpointFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which of a follower's own files a snapshot install may hard-link instead of fetching. Found by
 * the nemesis suite (2026-12-01): a follower kept its own 000316.blob because it had the leader's
 * size and whole-file CRC32C, though not one byte of its records was the same, and the leader's
 * tables then pointed into it ("blob value checksum mismatch" on every later scan).
 */
class SnapshotFetcherTest {
  @TempDir Path dir;

  /** A blob file of three 9 KiB values, as two nodes write under one number. */
  private static Path blobFile(Path dir, String node) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("000316.blob");
    BlobFileWriter w = new BlobFileWriter(file, 316, bytes -> {});
    for (int i = 0; i < 3; i++) {
      byte[] value = new byte[9 * 1024];
      Arrays.fill(value, (byte) (node.hashCode() + i));
      w.add((node + "-key-" + i).getBytes(StandardCharsets.UTF_8), value);
    }
    w.finish();
    return file;
  }

  private static CheckpointFile describe(Path file) throws IOException {
    return CheckpointFile.newBuilder()
        .setName(file.getFileName().toString())
        .setSize(Files.size(file))
        .setSha256(ByteString.copyFrom(CheckpointStore.sha256(file)))
        .build();
  }

  private static int crc32c(Path file) throws IOException {
    CRC32C crc = new CRC32C();
    crc.update(Files.readAllBytes(file));
    return (int) crc.getValue();
  }

  @Test
  void aFileOfTheSameNameSizeAndCrcButOtherRecordsIsFetchedNotReused() throws IOException {
    Path leaders = blobFile(dir.resolve("leader"), "n2");
    Path followers = blobFile(dir.resolve("follower"), "n3");
    assertThat(Files.readAllBytes(followers)).isNotEqualTo(Files.readAllBytes(leaders));
    // The trap: records that each end with their own CRC32C make the whole-file CRC32C depend
    // on the record lengths only, so the two files cannot be told apart by it.
    assertThat(Files.size(followers)).isEqualTo(Files.size(leaders));
    assertThat(crc32c(followers)).isEqualTo(crc32c(leaders));

    assertThat(SnapshotFetcher.reusable(followers, describe(leaders))).isFalse();
    assertThat(SnapshotFetcher.reusable(leaders, describe(leaders))).isTrue();
  }

  @Test
  void onlyTablesAndBlobFilesAreReused() throws IOException {
    Path manifest = dir.resolve("MANIFEST-000007");
    Files.write(manifest, new byte[] {1, 2, 3});
    assertThat(SnapshotFetcher.reusable(manifest, describe(manifest))).isFalse();
  }
}
