package io.shale.node.snapshot;

import io.grpc.ManagedChannel;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.version.FileNames;
import io.shale.node.snapshot.proto.CheckpointFile;
import io.shale.node.snapshot.proto.FetchRequest;
import io.shale.node.snapshot.proto.FileChunk;
import io.shale.node.snapshot.proto.ManifestRequest;
import io.shale.node.snapshot.proto.ManifestResponse;
import io.shale.node.snapshot.proto.ReleaseRequest;
import io.shale.node.snapshot.proto.SnapshotTransferGrpc;
import io.shale.node.transport.PeerChannels;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/**
 * The follower's side of a snapshot transfer: fetches the leader's checkpoint into a {@link
 * StagedInstall}. A table or blob file the local engine already holds under the same name with the
 * same size and SHA-256 (files are immutable, so that is the same file) is hard-linked instead of
 * fetched; manifests are always fetched. Every fetched file is checked against the leader's SHA-256
 * and synced before the install is marked ready.
 *
 * <p>Why a cryptographic hash: names alone mean nothing across nodes (each engine numbers its own
 * files), and a whole-file CRC32C does not tell two of the engine's files apart when their records
 * have the same lengths (see {@link CheckpointStore#sha256}); reusing such a file put another
 * lineage's blob file under tables that point into it.
 */
public final class SnapshotFetcher {
  /** What one transfer did. */
  public record Result(
      long term,
      long index,
      int filesFetched,
      long bytesFetched,
      int filesReused,
      long bytesReused) {}

  private SnapshotFetcher() {}

  /**
   * Fetches a checkpoint of at least {@code minIndex} from the node whose Raft port is at {@code
   * address} into {@code staged}, reusing files of {@code engineDir}.
   */
  public static Result fetch(
      PeerChannels peers,
      String address,
      long minIndex,
      String requester,
      Path engineDir,
      StagedInstall staged)
      throws IOException {
    ManagedChannel channel = peers.open(address, SnapshotTransferService.CHUNK_BYTES + (1 << 20));
    try {
      SnapshotTransferGrpc.SnapshotTransferBlockingStub stub =
          SnapshotTransferGrpc.newBlockingStub(channel);
      ManifestResponse m =
          stub.withDeadlineAfter(5, TimeUnit.MINUTES)
              .manifest(
                  ManifestRequest.newBuilder()
                      .setMinIndex(minIndex)
                      .setRequester(requester)
                      .build());
      try {
        return staged.stage(
            dir -> {
              int fetched = 0;
              int reused = 0;
              long fetchedBytes = 0;
              long reusedBytes = 0;
              for (CheckpointFile f : m.getFilesList()) {
                checkName(f.getName());
                Path target = dir.resolve(f.getName());
                if (reusable(engineDir.resolve(f.getName()), f)) {
                  Files.createLink(target, engineDir.resolve(f.getName()));
                  reused++;
                  reusedBytes += f.getSize();
                } else {
                  download(stub, m.getTransfer(), f, target, address);
                  fetched++;
                  fetchedBytes += f.getSize();
                }
              }
              return new Result(
                  m.getTerm(), m.getIndex(), fetched, fetchedBytes, reused, reusedBytes);
            });
      } finally {
        try {
          stub.withDeadlineAfter(10, TimeUnit.SECONDS)
              .release(ReleaseRequest.newBuilder().setTransfer(m.getTransfer()).build());
        } catch (RuntimeException ignored) {
          // The leader's lease drops the pin anyway.
        }
      }
    } finally {
      channel.shutdownNow();
    }
  }

  private static void checkName(String name) {
    if (name.isEmpty() || name.contains("/") || name.equals("..") || name.equals(".")) {
      throw new IllegalArgumentException(
          "the leader named an invalid checkpoint file \"" + name + "\"");
    }
  }

  /**
   * Whether {@code local} is the leader's file {@code f}: only immutable files (tables, blob files)
   * may be shared with the live engine directory, and only with the same size and SHA-256.
   */
  static boolean reusable(Path local, CheckpointFile f) throws IOException {
    boolean immutable =
        FileNames.parseTable(f.getName()) >= 0 || FileNames.parseBlob(f.getName()) >= 0;
    return immutable
        && Files.isRegularFile(local)
        && Files.size(local) == f.getSize()
        && MessageDigest.isEqual(CheckpointStore.sha256(local), f.getSha256().toByteArray());
  }

  private static void download(
      SnapshotTransferGrpc.SnapshotTransferBlockingStub stub,
      long transfer,
      CheckpointFile f,
      Path target,
      String address)
      throws IOException {
    if (f.getSha256().size() != 32) {
      throw new IOException(
          "the manifest from "
              + address
              + " gives checkpoint file "
              + f.getName()
              + " no SHA-256 (a leader older than this node?)");
    }
    MessageDigest sha = CheckpointStore.newSha256();
    long size = 0;
    try (FileChannel out =
        FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      Iterator<FileChunk> chunks =
          stub.withDeadlineAfter(30, TimeUnit.MINUTES)
              .fetch(FetchRequest.newBuilder().setTransfer(transfer).setName(f.getName()).build());
      while (chunks.hasNext()) {
        ByteBuffer data = chunks.next().getData().asReadOnlyByteBuffer();
        sha.update(data.duplicate());
        size += data.remaining();
        DurableFiles.writeFully(out, data);
      }
      out.force(true);
    }
    byte[] digest = sha.digest();
    if (size != f.getSize() || !MessageDigest.isEqual(digest, f.getSha256().toByteArray())) {
      throw new IOException(
          "checkpoint file "
              + f.getName()
              + " from "
              + address
              + " arrived with "
              + size
              + " bytes and SHA-256 "
              + HexFormat.of().formatHex(digest)
              + ", expected "
              + f.getSize()
              + " bytes and "
              + HexFormat.of().formatHex(f.getSha256().toByteArray()));
    }
  }
}
