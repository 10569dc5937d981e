package io.shale.node.snapshot;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.shale.node.snapshot.proto.CheckpointFile;
import io.shale.node.snapshot.proto.FetchRequest;
import io.shale.node.snapshot.proto.FileChunk;
import io.shale.node.snapshot.proto.ManifestRequest;
import io.shale.node.snapshot.proto.ManifestResponse;
import io.shale.node.snapshot.proto.ReleaseRequest;
import io.shale.node.snapshot.proto.ReleaseResponse;
import io.shale.node.snapshot.proto.SnapshotTransferGrpc;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.function.Function;

/**
 * The leader's side of a snapshot transfer: names the files of a checkpoint and streams them.
 * Checkpoint ids are checkpoint indexes.
 */
public final class SnapshotTransferService extends SnapshotTransferGrpc.SnapshotTransferImplBase {
  /** Bytes per streamed chunk: large enough to amortize a message, small against any limit. */
  static final int CHUNK_BYTES = 1 << 20;

  private final CheckpointStore store;

  /** Takes a checkpoint of the current engine (a fresh one when the newest is too old). */
  private final Callable<CheckpointStore.Checkpoint> take;

  public SnapshotTransferService(CheckpointStore store, Callable<CheckpointStore.Checkpoint> take) {
    this.store = store;
    this.take = take;
  }

  @Override
  public void manifest(ManifestRequest request, StreamObserver<ManifestResponse> out) {
    try {
      CheckpointStore.Transfer t = store.pinNewest();
      if (t == null || t.checkpoint().index() < request.getMinIndex()) {
        if (t != null) {
          store.release(t.token());
        }
        take.call();
        t = store.pinNewest(); // the one just taken, or a newer one
      }
      CheckpointStore.Checkpoint c = t.checkpoint();
      if (c.index() < request.getMinIndex()) {
        store.release(t.token());
        out.onError(
            Status.FAILED_PRECONDITION
                .withDescription(
                    "this node's newest checkpoint "
                        + "is at index "
                        + c.index()
                        + ", below the "
                        + request.getMinIndex()
                        + " asked for")
                .asException());
        return;
      }
      ManifestResponse.Builder b =
          ManifestResponse.newBuilder()
              .setCheckpointId(c.index())
              .setTransfer(t.token())
              .setTerm(c.term())
              .setIndex(c.index());
      for (CheckpointStore.FileEntry f : store.files(c)) {
        b.addFiles(
            CheckpointFile.newBuilder()
                .setName(f.name())
                .setSize(f.size())
                .setSha256(ByteString.copyFrom(f.sha256())));
      }
      out.onNext(b.build());
      out.onCompleted();
    } catch (Exception e) {
      out.onError(Status.INTERNAL.withDescription("checkpoint for a transfer: " + e).asException());
    }
  }

  @Override
  public void fetch(FetchRequest request, StreamObserver<FileChunk> out) {
    stream(
        store,
        request.getTransfer(),
        request.getName(),
        out,
        data -> FileChunk.newBuilder().setData(data).build());
  }

  /**
   * Streams file {@code name} of transfer {@code transfer}'s checkpoint to {@code out} in chunks of
   * {@link #CHUNK_BYTES}, each wrapped by {@code chunk}, renewing the transfer's lease as it goes;
   * NOT_FOUND for a transfer that lapsed or a name outside the checkpoint.
   */
  public static <T> void stream(
      CheckpointStore store,
      long transfer,
      String name,
      StreamObserver<T> out,
      Function<ByteString, T> chunk) {
    CheckpointStore.Checkpoint c = store.use(transfer);
    if (c == null) {
      out.onError(
          Status.NOT_FOUND
              .withDescription("no such transfer, or its lease lapsed; ask for a new manifest")
              .asException());
      return;
    }
    Path file = c.directory().resolve(name).normalize();
    if (name.contains("/") || !file.getParent().equals(c.directory()) || !Files.exists(file)) {
      out.onError(
          Status.NOT_FOUND
              .withDescription("no file \"" + name + "\" in checkpoint " + c.index())
              .asException());
      return;
    }
    if (out instanceof ServerCallStreamObserver<T> call) {
      new PacedFile<>(store, transfer, file, call, chunk).start();
      return;
    }
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[CHUNK_BYTES];
      for (int n; (n = in.readNBytes(buf, 0, buf.length)) > 0; ) {
        out.onNext(chunk.apply(ByteString.copyFrom(buf, 0, n)));
        store.use(transfer);
      }
      out.onCompleted();
    } catch (IOException e) {
      out.onError(Status.INTERNAL.withDescription("reading " + file + ": " + e).asException());
    }
  }

  /**
   * One file sent at its reader's pace: a chunk is read from disk only while the call can take one
   * without queueing ({@code isReady}), and the rest follows from gRPC's on-ready callbacks. A
   * reader that stops reading holds the sender to about one flow-control window and one chunk, not
   * the whole file (tables are up to hundreds of MiB); a cancelled call closes the file.
   */
  private static final class PacedFile<T> {
    private final CheckpointStore store;
    private final long transfer;
    private final Path file;
    private final ServerCallStreamObserver<T> call;
    private final Function<ByteString, T> chunk;
    private final byte[] buf = new byte[CHUNK_BYTES];
    private InputStream in;
    private boolean done;

    PacedFile(
        CheckpointStore store,
        long transfer,
        Path file,
        ServerCallStreamObserver<T> call,
        Function<ByteString, T> chunk) {
      this.store = store;
      this.transfer = transfer;
      this.file = file;
      this.call = call;
      this.chunk = chunk;
    }

    /** Called from the service method: both callbacks must be set before it returns. */
    void start() {
      call.setOnCancelHandler(this::finish);
      call.setOnReadyHandler(this::send);
      send();
    }

    private synchronized void send() {
      try {
        if (in == null && !done) {
          in = Files.newInputStream(file);
        }
        while (!done && call.isReady()) {
          int n = in.readNBytes(buf, 0, buf.length);
          if (n <= 0) {
            finish();
            call.onCompleted();
            return;
          }
          call.onNext(chunk.apply(ByteString.copyFrom(buf, 0, n)));
          store.use(transfer);
        }
      } catch (IOException e) {
        finish();
        call.onError(Status.INTERNAL.withDescription("reading " + file + ": " + e).asException());
      }
    }

    private synchronized void finish() {
      done = true;
      if (in != null) {
        try {
          in.close();
        } catch (IOException ignored) {
          // read-only: nothing is lost
        }
        in = null;
      }
    }
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> out) {
    store.release(request.getTransfer());
    out.onNext(ReleaseResponse.getDefaultInstance());
    out.onCompleted();
  }
}
