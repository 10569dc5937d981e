package io.shale.client;

import com.google.protobuf.ByteString;
import io.shale.client.proto.Compare;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyRange;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.TxnOp;
import io.shale.client.proto.TxnOpResult;
import io.shale.client.proto.TxnRequest;
import io.shale.client.proto.TxnResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A transaction, etcd's Txn: if every comparison holds (or there are none), the {@code then}
 * operations apply, else the {@code else} ones; either way atomically, in order, at one Raft index,
 * and a get sees the operations before it.
 *
 * <pre>{@code
 * TxnResult r = client.txn()
 *     .ifVersion("lock", Txn.Cmp.EQUAL, 0)        // absent
 *     .thenPut("lock", "me")
 *     .elseGet("lock")
 *     .commit();
 * }</pre>
 *
 * An absent key has version, create index and mod index 0 and no value (a value comparison on it
 * does not hold). At most the node's {@code limits.max_txn_ops} (128 by default) comparisons and
 * operations in all. Retries are safe: the transaction carries one request id, so it applies once.
 * Not thread-safe; commit it once.
 */
public final class Txn {
  /** How the key's side relates to the operand for a comparison to hold. */
  public enum Cmp {
    EQUAL,
    NOT_EQUAL,
    LESS,
    GREATER
  }

  private final RetryingCall.Settings settings;
  private final TxnRequest.Builder request;
  private boolean committed;

  Txn(RetryingCall.Settings settings, ByteString requestId) {
    this.settings = settings;
    this.request = TxnRequest.newBuilder().setRequestId(requestId);
  }

  // ---- comparisons

  /** Holds if the key's value relates to {@code value} by {@code cmp} (as unsigned bytes). */
  public Txn ifValue(byte[] key, Cmp cmp, byte[] value) {
    request.addCompares(
        compare(key, Compare.Target.VALUE, cmp).setValue(ByteString.copyFrom(value)));
    return this;
  }

  public Txn ifValue(String key, Cmp cmp, String value) {
    return ifValue(ShaleClient.utf8(key), cmp, ShaleClient.utf8(value));
  }

  /** Holds if the key's version relates to {@code version} by {@code cmp} (0: absent). */
  public Txn ifVersion(byte[] key, Cmp cmp, long version) {
    return number(key, Compare.Target.VERSION, cmp, version);
  }

  public Txn ifVersion(String key, Cmp cmp, long version) {
    return ifVersion(ShaleClient.utf8(key), cmp, version);
  }

  /** Holds if the index of the key's last modification relates to {@code index} by {@code cmp}. */
  public Txn ifModIndex(byte[] key, Cmp cmp, long index) {
    return number(key, Compare.Target.MOD_INDEX, cmp, index);
  }

  public Txn ifModIndex(String key, Cmp cmp, long index) {
    return ifModIndex(ShaleClient.utf8(key), cmp, index);
  }

  /** Holds if the index of the put that created the key relates to {@code index} by {@code cmp}. */
  public Txn ifCreateIndex(byte[] key, Cmp cmp, long index) {
    return number(key, Compare.Target.CREATE_INDEX, cmp, index);
  }

  public Txn ifCreateIndex(String key, Cmp cmp, long index) {
    return ifCreateIndex(ShaleClient.utf8(key), cmp, index);
  }

  private Txn number(byte[] key, Compare.Target target, Cmp cmp, long n) {
    if (n < 0) {
      throw new IllegalArgumentException("a comparison with a negative " + target + ": " + n);
    }
    request.addCompares(compare(key, target, cmp).setNumber(n));
    return this;
  }

  private static Compare.Builder compare(byte[] key, Compare.Target target, Cmp cmp) {
    return Compare.newBuilder()
        .setKey(ByteString.copyFrom(key))
        .setTarget(target)
        .setResult(Compare.Result.forNumber(cmp.ordinal()));
  }

  // ---- operations when the comparisons hold

  public Txn thenPut(byte[] key, byte[] value) {
    request.addThen(put(key, value));
    return this;
  }

  public Txn thenPut(String key, String value) {
    return thenPut(ShaleClient.utf8(key), ShaleClient.utf8(value));
  }

  /** Puts {@code value} under {@code key}, attached to lease {@code leaseId} (0: none). */
  public Txn thenPut(byte[] key, byte[] value, long leaseId) {
    request.addThen(put(key, value, leaseId));
    return this;
  }

  public Txn thenPut(String key, String value, long leaseId) {
    return thenPut(ShaleClient.utf8(key), ShaleClient.utf8(value), leaseId);
  }

  public Txn thenDelete(byte[] key) {
    request.addThen(TxnOp.newBuilder().setDelete(ByteString.copyFrom(key)));
    return this;
  }

  public Txn thenDelete(String key) {
    return thenDelete(ShaleClient.utf8(key));
  }

  /** Deletes [start, end) (end null: to the last key); at most 10,000 keys in a transaction. */
  public Txn thenDeleteRange(byte[] start, byte[] end) {
    request.addThen(range(start, end));
    return this;
  }

  public Txn thenGet(byte[] key) {
    request.addThen(TxnOp.newBuilder().setGet(ByteString.copyFrom(key)));
    return this;
  }

  public Txn thenGet(String key) {
    return thenGet(ShaleClient.utf8(key));
  }

  // ---- operations when a comparison does not hold

  public Txn elsePut(byte[] key, byte[] value) {
    request.addOtherwise(put(key, value));
    return this;
  }

  public Txn elsePut(String key, String value) {
    return elsePut(ShaleClient.utf8(key), ShaleClient.utf8(value));
  }

  public Txn elsePut(byte[] key, byte[] value, long leaseId) {
    request.addOtherwise(put(key, value, leaseId));
    return this;
  }

  public Txn elseDelete(byte[] key) {
    request.addOtherwise(TxnOp.newBuilder().setDelete(ByteString.copyFrom(key)));
    return this;
  }

  public Txn elseDelete(String key) {
    return elseDelete(ShaleClient.utf8(key));
  }

  public Txn elseDeleteRange(byte[] start, byte[] end) {
    request.addOtherwise(range(start, end));
    return this;
  }

  public Txn elseGet(byte[] key) {
    request.addOtherwise(TxnOp.newBuilder().setGet(ByteString.copyFrom(key)));
    return this;
  }

  public Txn elseGet(String key) {
    return elseGet(ShaleClient.utf8(key));
  }

  private static TxnOp put(byte[] key, byte[] value) {
    return put(key, value, 0);
  }

  private static TxnOp put(byte[] key, byte[] value, long leaseId) {
    return TxnOp.newBuilder()
        .setPut(
            KeyValue.newBuilder()
                .setKey(ByteString.copyFrom(key))
                .setValue(ByteString.copyFrom(value))
                .setLease(leaseId))
        .build();
  }

  private static TxnOp range(byte[] start, byte[] end) {
    KeyRange.Builder r = KeyRange.newBuilder().setStart(ByteString.copyFrom(start));
    if (end != null) {
      r.setEnd(ByteString.copyFrom(end));
    }
    return TxnOp.newBuilder().setDeleteRange(r).build();
  }

  /** Sends the transaction; completes with its outcome once it is applied. */
  public CompletableFuture<TxnResult> commitAsync() {
    if (committed) {
      throw new IllegalStateException("this transaction was already committed");
    }
    committed = true;
    TxnRequest req = request.build();
    return RetryingCall.start(
            settings,
            "txn",
            (ch, t) ->
                KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).txn(req))
        .thenApply(Txn::result);
  }

  public TxnResult commit() {
    return ShaleClient.join(commitAsync());
  }

  private static TxnResult result(TxnResponse r) {
    List<TxnResult.OpResult> results = new ArrayList<>(r.getResultsCount());
    for (TxnOpResult o : r.getResultsList()) {
      Entry e =
          o.getFound()
              ? new Entry(
                  o.getKey().toByteArray(),
                  o.getValue().toByteArray(),
                  o.getModIndex(),
                  o.getCreateIndex(),
                  o.getVersion())
              : null;
      results.add(new TxnResult.OpResult(o.getDeleted(), e));
    }
    return new TxnResult(r.getSucceeded(), r.getHeader().getAppliedIndex(), results);
  }
}
