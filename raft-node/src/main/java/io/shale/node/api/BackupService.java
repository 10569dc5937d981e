package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.BackupChunk;
import io.shale.client.proto.BackupFileInfo;
import io.shale.client.proto.BackupGrpc;
import io.shale.client.proto.BeginBackupRequest;
import io.shale.client.proto.BeginBackupResponse;
import io.shale.client.proto.EndBackupRequest;
import io.shale.client.proto.EndBackupResponse;
import io.shale.client.proto.FetchBackupFileRequest;
import io.shale.engine.Engine;
import io.shale.node.snapshot.CheckpointStore;
import io.shale.node.snapshot.SnapshotTransferService;
import io.shale.node.statemachine.ShaleStateMachine;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Backup service (backup.proto): a checkpoint of this node's engine at its applied index,
 * pinned for the caller to fetch file by file. The checkpoint is the one a Raft snapshot takes
 * (every key, request records, leases, users), so a backup holds all replicated state at one index.
 * Access: ADMIN ({@code Requirement}'s default).
 */
public final class BackupService extends BackupGrpc.BackupImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(BackupService.class);

  private final ShaleStateMachine stateMachine;
  private final RaftServer.Division division;
  private final String cluster;

  public BackupService(
      ShaleStateMachine stateMachine, RaftServer.Division division, String cluster) {
    this.stateMachine = stateMachine;
    this.division = division;
    this.cluster = cluster;
  }

  @Override
  public void begin(BeginBackupRequest request, StreamObserver<BeginBackupResponse> out) {
    try {
      // Flushed first: a checkpoint holds what the engine made durable, and a backup is asked
      // for everything applied before the call.
      Engine engine = stateMachine.engine();
      if (engine != null) {
        engine.flush();
      }
      long taken = stateMachine.takeCheckpoint().index();
      CheckpointStore store = stateMachine.checkpoints();
      CheckpointStore.Transfer t = store.pinNewest();
      if (t == null || t.checkpoint().index() < taken) {
        if (t != null) {
          store.release(t.token());
        }
        throw new IllegalStateException("the checkpoint at index " + taken + " was replaced");
      }
      CheckpointStore.Checkpoint c = t.checkpoint();
      BeginBackupResponse.Builder b =
          BeginBackupResponse.newBuilder()
              .setHeader(ResponseHeaders.of(division, c.index()))
              .setBackupId(t.token())
              .setTerm(c.term())
              .setIndex(c.index())
              .setCluster(cluster)
              .setNodeId(division.getId().toString());
      for (CheckpointStore.FileEntry f : store.files(c)) {
        b.addFiles(
            BackupFileInfo.newBuilder()
                .setName(f.name())
                .setSize(f.size())
                .setSha256(ByteString.copyFrom(f.sha256())));
      }
      LOG.info(
          "backup {} begun at index {} (term {}): {} files",
          Long.toUnsignedString(t.token()),
          c.index(),
          c.term(),
          b.getFilesCount());
      out.onNext(b.build());
      out.onCompleted();
    } catch (Exception e) {
      out.onError(
          Status.UNAVAILABLE
              .withDescription("could not take a checkpoint for a backup: " + e.getMessage())
              .asException());
    }
  }

  @Override
  public void fetch(FetchBackupFileRequest request, StreamObserver<BackupChunk> out) {
    SnapshotTransferService.stream(
        stateMachine.checkpoints(),
        request.getBackupId(),
        request.getName(),
        out,
        data -> BackupChunk.newBuilder().setData(data).build());
  }

  @Override
  public void end(EndBackupRequest request, StreamObserver<EndBackupResponse> out) {
    stateMachine.checkpoints().release(request.getBackupId());
    out.onNext(EndBackupResponse.getDefaultInstance());
    out.onCompleted();
  }
}
