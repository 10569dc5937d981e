package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The replies of identified writes, kept in the engine (so every replica has them, and they survive
 * restarts and snapshots like any data) under the node's reserved prefix:
 *
 * <pre>
 *   \0r{request id}              -> applied index:int64, command hash:32 (SHA-256), reply bytes
 *   \0i{index:int64}{request id} -> (empty)                            (expiry, in index order)
 * </pre>
 *
 * A retry with the same id and the same command within {@link #RETAIN_ENTRIES} log entries gets the
 * stored reply; the same id with another command is refused. A record older than that is ignored
 * whether or not it is still there (so the answer depends on log indexes only, the same on every
 * replica), and deleted by an entry whose index is a multiple of {@link #EXPIRY_EVERY}. Stored
 * replies are small: a compare-and-set's current value is kept only up to {@link #MAX_STORED_VALUE}
 * bytes (CommandApplier re-reads a larger one on a retry).
 */
final class RequestRecords {
  static final long RETAIN_ENTRIES = 100_000;
  static final long EXPIRY_EVERY = 1_024;
  static final int MAX_STORED_VALUE = 1_024;

  /**
   * Records one expiry run deletes at most (the rest go in later runs; they are ignored anyway).
   */
  static final int MAX_EXPIRED_PER_RUN = 100_000;

  private static final int HASH_BYTES = 32;
  private static final byte[] LOOKUP = {0, 'r'};
  private static final byte[] BY_INDEX = {0, 'i'};

  /** A stored record: when it was applied, what command it was, what it answered. */
  record Record(long index, byte[] commandHash, byte[] reply) {}

  private RequestRecords() {}

  static byte[] lookupKey(byte[] requestId) {
    return concat(LOOKUP, requestId);
  }

  private static byte[] indexKey(long index, byte[] requestId) {
    return concat(indexKeyPrefix(index), requestId);
  }

  /** Where the expiry keys of the records applied at {@code index} begin. */
  static byte[] indexKeyPrefix(long index) {
    return concat(BY_INDEX, ByteBuffer.allocate(8).putLong(index).array());
  }

  /** The SHA-256 of a command's encoded form: what binds a request id to one command. */
  static byte[] hash(Command command) {
    return sha256().digest(CommandCodec.encode(command));
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime provides SHA-256", e);
    }
  }

  static void record(
      WriteBatch batch, byte[] requestId, long index, byte[] commandHash, byte[] reply) {
    batch.put(
        lookupKey(requestId),
        ByteBuffer.allocate(8 + HASH_BYTES + reply.length)
            .putLong(index)
            .put(commandHash)
            .put(reply)
            .array());
    batch.put(indexKey(index, requestId), new byte[0]);
  }

  /**
   * The record of {@code requestId} if one is young enough to answer a retry arriving at {@code
   * index}; null otherwise.
   */
  static Record find(Engine engine, byte[] requestId, long index) {
    return find(engine, requestId, index, null);
  }

  /**
   * As {@link #find(Engine, byte[], long)}, not reading the engine when {@code recent} rules out a
   * record.
   */
  static Record find(Engine engine, byte[] requestId, long index, RecentRequestIds recent) {
    if (recent != null && !recent.mayHold(requestId, index)) {
      return null;
    }
    byte[] stored = engine.get(lookupKey(requestId));
    if (stored == null || stored.length < 8 + HASH_BYTES) {
      return null;
    }
    ByteBuffer in = ByteBuffer.wrap(stored);
    long at = in.getLong();
    if (index - at > RETAIN_ENTRIES) {
      return null;
    }
    return new Record(
        at,
        Arrays.copyOfRange(stored, 8, 8 + HASH_BYTES),
        Arrays.copyOfRange(stored, 8 + HASH_BYTES, stored.length));
  }

  /**
   * Adds to {@code batch} the deletion of every record more than RETAIN_ENTRIES old. The caller
   * adds it before the entry's own writes, so that a record the entry writes afresh under an old id
   * wins over its deletion.
   */
  static void expire(Engine engine, WriteBatch batch, long index) {
    long before = index - RETAIN_ENTRIES;
    if (before <= 0) {
      return;
    }
    byte[] end = concat(BY_INDEX, ByteBuffer.allocate(8).putLong(before).array());
    try (ScanIterator it =
        engine.scan(new ScanOptions(BY_INDEX, end, MAX_EXPIRED_PER_RUN, false, true))) {
      while (it.next()) {
        byte[] k = it.key();
        batch.delete(k);
        byte[] lookup = lookupKey(Arrays.copyOfRange(k, BY_INDEX.length + 8, k.length));
        byte[] current = engine.get(lookup);
        long recordedAt = ByteBuffer.wrap(k, BY_INDEX.length, 8).getLong();
        // The id may have been reused (after its first record expired): keep the newer record.
        if (current != null
            && current.length >= 8
            && ByteBuffer.wrap(current).getLong() == recordedAt) {
          batch.delete(lookup);
        }
      }
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
