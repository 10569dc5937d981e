package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The replies of identified writes, kept in the engine (so every replica has them, and they survive
 * restarts and snapshots like any data) under the node's reserved prefix:
 *
 * <pre>
 *   \0r{request id}              -> applied index:int64, reply bytes   (lookup)
 *   \0i{index:int64}{request id} -> (empty)                            (expiry, in index order)
 * </pre>
 *
 * A retry with the same id within {@link #RETAIN_ENTRIES} log entries gets the stored reply; a
 * record older than that is ignored whether or not it is still there (so the answer depends on log
 * indexes only, the same on every replica), and deleted by the next entry whose index is a multiple
 * of {@link #EXPIRY_EVERY}. Clients retry within seconds; 100,000 entries is minutes of writes at
 * the highest rates measured.
 */
final class RequestRecords {
  static final long RETAIN_ENTRIES = 100_000;
  static final long EXPIRY_EVERY = 1_024;
  private static final byte[] LOOKUP = {0, 'r'};
  private static final byte[] BY_INDEX = {0, 'i'};

  private RequestRecords() {}

  static byte[] lookupKey(byte[] requestId) {
    return concat(LOOKUP, requestId);
  }

  private static byte[] indexKey(long index, byte[] requestId) {
    return concat(concat(BY_INDEX, ByteBuffer.allocate(8).putLong(index).array()), requestId);
  }

  static void record(WriteBatch batch, byte[] requestId, long index, byte[] reply) {
    batch.put(
        lookupKey(requestId),
        ByteBuffer.allocate(8 + reply.length).putLong(index).put(reply).array());
    batch.put(indexKey(index, requestId), new byte[0]);
  }

  /** Whether a lookup record is young enough to answer a retry arriving at {@code index}. */
  static boolean stillRetained(byte[] record, long index) {
    return index - ByteBuffer.wrap(record).getLong() <= RETAIN_ENTRIES;
  }

  /** The reply stored in a lookup record. */
  static byte[] reply(byte[] record) {
    return Arrays.copyOfRange(record, 8, record.length);
  }

  /** Adds to {@code batch} the deletion of every record more than RETAIN_ENTRIES old. */
  static void expire(Engine engine, WriteBatch batch, long index) {
    long before = index - RETAIN_ENTRIES;
    if (before <= 0) {
      return;
    }
    byte[] end = concat(BY_INDEX, ByteBuffer.allocate(8).putLong(before).array());
    try (ScanIterator it =
        engine.scan(new ScanOptions(BY_INDEX, end, Long.MAX_VALUE, false, true))) {
      while (it.next()) {
        byte[] k = it.key();
        batch.delete(k);
        batch.delete(lookupKey(Arrays.copyOfRange(k, BY_INDEX.length + 8, k.length)));
      }
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
