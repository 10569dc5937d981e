package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.Op;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.Compare;
import io.shale.node.statemachine.TxnOp;
import java.util.Arrays;

/**
 * Checks a client request against the node's configured limits before anything reaches the Raft
 * log, and converts its keys, values and operations to their command form. A violation is an {@link
 * IllegalArgumentException}; one over a size limit is a {@link LimitExceeded} whose trailer names
 * the limit.
 */
public final class RequestLimits {
  /** Scan entries when a request asks for 0. */
  static final int DEFAULT_SCAN_LIMIT = 1000;

  private final int maxKeyBytes;
  private final int maxValueBytes;
  private final int maxBatchOps;
  private final int maxScanEntries;
  private final int deleteRangeChunkKeys;
  private final int maxTxnOps;

  /**
   * @param maxKeyBytes keys longer than this are refused ({@code limits.max_key_size})
   * @param maxValueBytes values longer than this are refused ({@code limits.max_value_size})
   * @param maxBatchOps batches with more operations are refused ({@code limits.max_batch_ops})
   * @param maxScanEntries larger scan limits are refused ({@code limits.max_scan_entries})
   * @param deleteRangeChunkKeys keys one delete-range entry deletes at most ({@code
   *     limits.delete_range_chunk_keys})
   * @param maxTxnOps compares and operations one transaction may hold ({@code limits.max_txn_ops})
   */
  public RequestLimits(
      int maxKeyBytes,
      int maxValueBytes,
      int maxBatchOps,
      int maxScanEntries,
      int deleteRangeChunkKeys,
      int maxTxnOps) {
    this.maxTxnOps = Math.min(maxTxnOps, CommandCodec.MAX_TXN_PARTS);
    this.maxKeyBytes = maxKeyBytes;
    this.maxValueBytes = maxValueBytes;
    this.maxBatchOps = Math.min(maxBatchOps, CommandCodec.MAX_BATCH_OPS);
    this.maxScanEntries = maxScanEntries;
    this.deleteRangeChunkKeys = Math.min(deleteRangeChunkKeys, CommandCodec.MAX_DELETE_RANGE_KEYS);
  }

  /** Key and value limits; the others at their defaults. */
  RequestLimits(int maxKeyBytes, int maxValueBytes) {
    this(maxKeyBytes, maxValueBytes, 10_000, 10_000, 10_000, 128);
  }

  int deleteRangeChunkKeys() {
    return deleteRangeChunkKeys;
  }

  /** A batch's operation count, refused past {@code limits.max_batch_ops}. */
  void batchSize(int ops) {
    if (ops == 0) {
      throw new IllegalArgumentException("a batch needs at least one operation");
    }
    if (ops > maxBatchOps) {
      throw new LimitExceeded(
          ErrorTrailers.TOO_MANY_OPERATIONS,
          "batch of "
              + ops
              + " operations exceeds the limit of "
              + maxBatchOps
              + " (limits.max_batch_ops)");
    }
  }

  /** A transaction's compares and operations, refused past {@code limits.max_txn_ops}. */
  void txnSize(int parts) {
    if (parts > maxTxnOps) {
      throw new LimitExceeded(
          ErrorTrailers.TOO_MANY_OPERATIONS,
          "transaction of "
              + parts
              + " compares and operations exceeds the limit of "
              + maxTxnOps
              + " (limits.max_txn_ops)");
    }
  }

  /** A transaction's compare, its key and operand checked. */
  Compare compare(io.shale.client.proto.Compare c) {
    byte[] key = key(c.getKey());
    Compare.Result result =
        switch (c.getResult()) {
          case EQUAL -> Compare.Result.EQUAL;
          case NOT_EQUAL -> Compare.Result.NOT_EQUAL;
          case LESS -> Compare.Result.LESS;
          case GREATER -> Compare.Result.GREATER;
          case UNRECOGNIZED -> throw new IllegalArgumentException("unknown compare result");
        };
    if (c.getTarget() == io.shale.client.proto.Compare.Target.VALUE) {
      if (c.getOperandCase() != io.shale.client.proto.Compare.OperandCase.VALUE) {
        throw new IllegalArgumentException("a VALUE compare needs a value operand");
      }
      return Compare.value(key, result, value(c.getValue()));
    }
    if (c.getOperandCase() == io.shale.client.proto.Compare.OperandCase.VALUE) {
      throw new IllegalArgumentException("a " + c.getTarget() + " compare needs a number operand");
    }
    long n = c.getNumber();
    if (n < 0) {
      throw new IllegalArgumentException(
          "compare operand " + Long.toUnsignedString(n) + " too large");
    }
    Compare.Target target =
        switch (c.getTarget()) {
          case VERSION -> Compare.Target.VERSION;
          case CREATE_INDEX -> Compare.Target.CREATE_INDEX;
          case MOD_INDEX -> Compare.Target.MOD_INDEX;
          default -> throw new IllegalArgumentException("unknown compare target");
        };
    return Compare.number(key, target, result, n);
  }

  /** A transaction's operation, its keys and value checked. */
  TxnOp txnOp(io.shale.client.proto.TxnOp op) {
    return switch (op.getOpCase()) {
      case PUT ->
          new TxnOp.Put(
              key(op.getPut().getKey()),
              value(op.getPut().getValue()),
              lease(op.getPut().getLease()));
      case DELETE -> new TxnOp.Delete(key(op.getDelete()));
      case DELETE_RANGE -> {
        byte[] start = op.getDeleteRange().getStart().toByteArray();
        if (start.length > maxKeyBytes) {
          throw new LimitExceeded(
              ErrorTrailers.KEY_TOO_LARGE,
              "range start of " + start.length + " bytes exceeds limits.max_key_size");
        }
        ByteString end = op.getDeleteRange().getEnd();
        yield new TxnOp.DeleteRange(start, end.isEmpty() ? null : key(end));
      }
      case GET -> new TxnOp.Get(key(op.getGet()));
      case OP_NOT_SET -> throw new IllegalArgumentException("a transaction operation is empty");
    };
  }

  /**
   * A scan's entry limit: the request's {@code uint32} read as unsigned, 0 for the default, refused
   * past {@code limits.max_scan_entries}.
   */
  int scanLimit(int requested) {
    long limit = Integer.toUnsignedLong(requested);
    if (limit == 0) {
      return Math.min(DEFAULT_SCAN_LIMIT, maxScanEntries);
    }
    if (limit > maxScanEntries) {
      throw new LimitExceeded(
          ErrorTrailers.SCAN_LIMIT_TOO_LARGE,
          "scan limit of "
              + limit
              + " exceeds the limit of "
              + maxScanEntries
              + " (limits.max_scan_entries); page through with more");
    }
    return (int) limit;
  }

  /** A request over one of the configured size limits; {@link #error} is its trailer reason. */
  static final class LimitExceeded extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    final String error;

    LimitExceeded(String error, String message) {
      super(message);
      this.error = error;
    }
  }

  /** A user key: non-empty, not reserved, at most {@code limits.max_key_size} bytes. */
  byte[] key(ByteString k) {
    if (k.size() > maxKeyBytes) {
      throw new LimitExceeded(
          ErrorTrailers.KEY_TOO_LARGE,
          "key of "
              + k.size()
              + " bytes exceeds the limit of "
              + maxKeyBytes
              + " bytes (limits.max_key_size)");
    }
    return CommandCodec.checkKey(k.toByteArray());
  }

  /** A value of at most {@code limits.max_value_size} bytes. */
  byte[] value(ByteString v) {
    if (v.size() > maxValueBytes) {
      throw new LimitExceeded(
          ErrorTrailers.VALUE_TOO_LARGE,
          "value of "
              + v.size()
              + " bytes exceeds the limit of "
              + maxValueBytes
              + " bytes (limits.max_value_size)");
    }
    return v.toByteArray();
  }

  /** A lease id a put names (0: none). */
  static long lease(long id) {
    if (id < 0) {
      throw new IllegalArgumentException("lease id " + id + " is negative (0: no lease)");
    }
    return id;
  }

  /** A put or a delete, its key and value checked. */
  Command.Op op(Op op) {
    return switch (op.getOpCase()) {
      case PUT ->
          new Command.Op(
              key(op.getPut().getKey()),
              value(op.getPut().getValue()),
              lease(op.getPut().getLease()));
      case DELETE -> new Command.Op(key(op.getDelete()), null);
      case OP_NOT_SET ->
          throw new IllegalArgumentException("an operation is neither put nor delete");
    };
  }

  /** The exclusive end of a range, null for "to the end of the keyspace"; must follow start. */
  static byte[] rangeEnd(byte[] start, ByteString end) {
    if (end.isEmpty()) {
      return null;
    }
    byte[] e = end.toByteArray();
    if (Arrays.compareUnsigned(start, e) >= 0) {
      throw new IllegalArgumentException("malformed range: end must be after start");
    }
    return e;
  }
}
