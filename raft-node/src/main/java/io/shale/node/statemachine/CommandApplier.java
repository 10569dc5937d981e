package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.VersionedValue;
import io.shale.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns one committed command into its effects: {@code (state, command, index) -> (write batch,
 * reply)}. It reads the applied state and writes nothing; the caller applies the batch at the
 * index. Deterministic: every replica, given the same state and entry, builds the same batch and
 * reply, which is what lets a compare-and-set be decided at apply time. Knows nothing of Ratis.
 *
 * <p>Request ids make a retried write apply once: a request id already recorded (in the engine, or
 * earlier in the same entry) gets its first reply and adds nothing.
 */
public final class CommandApplier {
  /** The batch to apply at the entry's index, and the encoded reply to the client. */
  public record Applied(WriteBatch batch, byte[] reply) {}

  /**
   * The effects of {@code command}, committed at {@code index}, on {@code state} (the engine as of
   * index - 1). Also expires old request records every {@link RequestRecords#EXPIRY_EVERY} entries.
   */
  public Applied apply(Engine state, Command command, long index) {
    WriteBatch batch = new WriteBatch();
    byte[] reply;
    if (command instanceof Command.Group g) {
      // Client writes the leader grouped into one entry: applied in order, in one engine batch.
      List<byte[]> replies = new ArrayList<>(g.commands().size());
      Map<ByteBuffer, byte[]> idsInEntry = new HashMap<>();
      for (Command c : g.commands()) {
        replies.add(applyOne(state, c, index, batch, idsInEntry));
      }
      reply = Reply.encode(new Reply.Many(index, replies));
    } else {
      reply = applyOne(state, command, index, batch, null);
    }
    if (index % RequestRecords.EXPIRY_EVERY == 0) {
      RequestRecords.expire(state, batch, index);
    }
    return new Applied(batch, reply);
  }

  /**
   * Adds the effects of one command to {@code batch} and returns its encoded reply. {@code
   * idsInEntry} holds the replies of request ids earlier in the same entry (null for an entry of
   * one command).
   */
  private static byte[] applyOne(
      Engine state,
      Command command,
      long index,
      WriteBatch batch,
      Map<ByteBuffer, byte[]> idsInEntry) {
    byte[] requestId = null;
    if (command instanceof Command.Identified id) {
      requestId = id.requestId();
      byte[] sameEntry = idsInEntry == null ? null : idsInEntry.get(ByteBuffer.wrap(requestId));
      if (sameEntry != null) {
        return sameEntry;
      }
      byte[] earlier = state.get(RequestRecords.lookupKey(requestId));
      if (earlier != null && RequestRecords.stillRetained(earlier, index)) {
        return RequestRecords.reply(earlier); // a retry: the first attempt's reply
      }
      command = id.command();
    }
    Reply reply;
    if (command instanceof Command.Batch b) {
      for (Command.Op op : b.ops()) {
        add(batch, op);
      }
      reply = new Reply.Written(index);
    } else if (command instanceof Command.DeleteRange r) {
      deleteRange(state, r, batch);
      reply = new Reply.Written(index);
    } else {
      reply = compareAndSet(state, (Command.CompareAndSet) command, index, batch);
    }
    byte[] bytes = Reply.encode(reply);
    if (requestId != null) {
      RequestRecords.record(batch, requestId, index, bytes);
      if (idsInEntry != null) {
        idsInEntry.put(ByteBuffer.wrap(requestId), bytes);
      }
    }
    return bytes;
  }

  /** Deletes every user key in the range; never the node's own records (keys starting with 0). */
  private static void deleteRange(Engine state, Command.DeleteRange r, WriteBatch batch) {
    try (ScanIterator it =
        state.scan(new ScanOptions(r.start(), r.end(), Long.MAX_VALUE, false, true))) {
      while (it.next()) {
        if (it.key().length > 0 && it.key()[0] != 0) {
          batch.delete(it.key());
        }
      }
    }
  }

  /** Compares the key's value or modification index with the expectation, then maybe writes. */
  private static Reply compareAndSet(
      Engine state, Command.CompareAndSet cas, long index, WriteBatch batch) {
    VersionedValue current = state.getVersioned(cas.key());
    long currentIndex = current == null ? 0 : current.index();
    boolean matches =
        cas.comparesIndex()
            ? currentIndex == cas.expectedIndex()
            : Arrays.equals(current == null ? null : current.value(), cas.expected());
    if (!matches) {
      return new Reply.CasResult(
          index, false, current == null ? null : current.value(), currentIndex);
    }
    add(batch, cas.then());
    boolean deleted = cas.then().isDelete();
    return new Reply.CasResult(index, true, cas.then().value(), deleted ? 0 : index);
  }

  private static void add(WriteBatch batch, Command.Op op) {
    if (op.isDelete()) {
      batch.delete(op.key());
    } else {
      batch.put(op.key(), op.value());
    }
  }
}
