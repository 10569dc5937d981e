package io.shale.client.backup;

import io.grpc.Channel;
import io.shale.client.proto.BackupChunk;
import io.shale.client.proto.BackupFileInfo;
import io.shale.client.proto.BackupGrpc;
import io.shale.client.proto.BeginBackupRequest;
import io.shale.client.proto.BeginBackupResponse;
import io.shale.client.proto.EndBackupRequest;
import io.shale.client.proto.FetchBackupFileRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Takes a backup from one node into an empty directory: the node checkpoints its engine at its
 * applied index and pins it; each file is fetched, checksummed and synced; the manifest is written
 * last. With a base backup, a file the base already holds (same size and SHA-256: engine tables and
 * blob files never change once written) is hard-linked from it instead of fetched, so an
 * incremental backup copies only new files and is still a whole backup on its own.
 */
public final class BackupSave {
  /** What a save did. */
  public record Result(
      BackupManifest manifest,
      int filesFetched,
      long bytesFetched,
      int filesLinked,
      long bytesLinked) {}

  /** Told after each file: how far the backup is. */
  @FunctionalInterface
  public interface Progress {
    void filesDone(int files, int ofFiles, long bytes, long ofBytes);
  }

  private BackupSave() {}

  /**
   * Saves a backup of the node at the other end of {@code channel} into {@code dir} (created; it
   * must not exist or be empty), sharing files with {@code base} (a verified backup, or null).
   */
  public static Result save(Channel channel, Path dir, Path base, Progress progress)
      throws IOException {
    if (Files.exists(dir) && !isEmptyDirectory(dir)) {
      throw new IOException("backup directory " + dir + " is not empty");
    }
    Map<String, Path> shared = new HashMap<>();
    Map<String, BackupManifest.FileInfo> sharedInfo = new HashMap<>();
    if (base != null) {
      for (BackupManifest.FileInfo f : BackupManifest.read(base).files()) {
        shared.put(f.identity(), base.resolve(BackupManifest.FILES).resolve(f.name()));
        sharedInfo.put(f.identity(), f);
      }
    }
    Path files = dir.resolve(BackupManifest.FILES);
    Files.createDirectories(files);
    BackupGrpc.BackupBlockingStub stub = BackupGrpc.newBlockingStub(channel);
    BeginBackupResponse begun =
        stub.withDeadlineAfter(5, TimeUnit.MINUTES).begin(BeginBackupRequest.getDefaultInstance());
    try {
      long total = begun.getFilesList().stream().mapToLong(BackupFileInfo::getSize).sum();
      List<BackupManifest.FileInfo> written = new ArrayList<>();
      int fetched = 0;
      int linked = 0;
      long fetchedBytes = 0;
      long linkedBytes = 0;
      long done = 0;
      for (BackupFileInfo f : begun.getFilesList()) {
        checkName(f.getName());
        Path target = files.resolve(f.getName());
        String identity = f.getSize() + ":" + HexFormat.of().formatHex(f.getSha256().toByteArray());
        Path from = shared.get(identity);
        if (from != null && Files.isRegularFile(from) && Files.size(from) == f.getSize()) {
          Files.createLink(target, from);
          BackupManifest.FileInfo same = sharedInfo.get(identity);
          written.add(
              new BackupManifest.FileInfo(
                  f.getName(), f.getSize(), same.sha256(), same.blockCrcs()));
          linked++;
          linkedBytes += f.getSize();
        } else {
          written.add(fetch(stub, begun.getBackupId(), f, target));
          fetched++;
          fetchedBytes += f.getSize();
        }
        done += f.getSize();
        progress.filesDone(written.size(), begun.getFilesCount(), done, total);
      }
      BackupFiles.syncDirectory(files);
      BackupManifest m =
          new BackupManifest(
              begun.getCluster(),
              begun.getNodeId(),
              begun.getTerm(),
              begun.getIndex(),
              Instant.now(),
              written);
      m.write(dir);
      return new Result(m, fetched, fetchedBytes, linked, linkedBytes);
    } finally {
      try {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS)
            .end(EndBackupRequest.newBuilder().setBackupId(begun.getBackupId()).build());
      } catch (RuntimeException ignored) {
        // The node's checkpoint lease unpins it anyway.
      }
    }
  }

  private static BackupManifest.FileInfo fetch(
      BackupGrpc.BackupBlockingStub stub, long backupId, BackupFileInfo f, Path target)
      throws IOException {
    BackupFiles sums = new BackupFiles();
    try (FileChannel out =
        FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      Iterator<BackupChunk> chunks =
          stub.withDeadlineAfter(6, TimeUnit.HOURS)
              .fetch(
                  FetchBackupFileRequest.newBuilder()
                      .setBackupId(backupId)
                      .setName(f.getName())
                      .build());
      while (chunks.hasNext()) {
        ByteBuffer data = chunks.next().getData().asReadOnlyByteBuffer();
        sums.update(data);
        while (data.hasRemaining()) {
          out.write(data);
        }
      }
      out.force(true);
    }
    BackupManifest.FileInfo got = sums.finish(f.getName());
    if (got.size() != f.getSize()
        || !MessageDigest.isEqual(got.sha256(), f.getSha256().toByteArray())) {
      throw new IOException(
          "file "
              + f.getName()
              + " arrived with "
              + got.size()
              + " bytes and another SHA-256 than the node named ("
              + f.getSize()
              + " bytes)");
    }
    return got;
  }

  private static void checkName(String name) {
    if (name.isEmpty() || name.contains("/") || name.equals("..") || name.equals(".")) {
      throw new IllegalArgumentException("the node named an invalid file \"" + name + "\"");
    }
  }

  private static boolean isEmptyDirectory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }
}
