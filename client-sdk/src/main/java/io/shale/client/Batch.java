package io.shale.client;

import com.google.protobuf.ByteString;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Puts and deletes applied together or not at all, in the order given (a later operation on the
 * same key wins): {@code client.batch().put("a", "1").delete("b").commit()}. A batch is one Raft
 * entry, so it is also the cheapest way to write many keys at once. Not thread-safe; commit it
 * once.
 */
public final class Batch {
  private final RetryingCall.Settings settings;
  private final BatchRequest.Builder request;
  private boolean committed;

  Batch(RetryingCall.Settings settings, ByteString requestId) {
    this.settings = settings;
    this.request = BatchRequest.newBuilder().setRequestId(requestId);
  }

  public Batch put(byte[] key, byte[] value) {
    request.addOps(
        Op.newBuilder()
            .setPut(
                KeyValue.newBuilder()
                    .setKey(ByteString.copyFrom(key))
                    .setValue(ByteString.copyFrom(value))));
    return this;
  }

  public Batch put(String key, String value) {
    return put(ShaleClient.utf8(key), ShaleClient.utf8(value));
  }

  public Batch delete(byte[] key) {
    request.addOps(Op.newBuilder().setDelete(ByteString.copyFrom(key)));
    return this;
  }

  public Batch delete(String key) {
    return delete(ShaleClient.utf8(key));
  }

  /** Operations added so far. */
  public int size() {
    return request.getOpsCount();
  }

  /** Sends the batch; completes when it is applied. */
  public CompletableFuture<Void> commitAsync() {
    if (committed) {
      throw new IllegalStateException("this batch was already committed");
    }
    if (request.getOpsCount() == 0) {
      throw new IllegalStateException("an empty batch: add a put or a delete first");
    }
    committed = true;
    BatchRequest req = request.build();
    return RetryingCall.start(
            settings,
            "batch",
            (ch, t) ->
                KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).batch(req))
        .thenApply(r -> null);
  }

  public void commit() {
    ShaleClient.join(commitAsync());
  }
}
