package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.VersionedValue;
import io.shale.engine.WriteBatch;
import io.shale.node.auth.AuthApplier;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one committed command into its effects: {@code (state, command, index) -> (write batch,
 * reply)}. It reads the applied state and writes nothing; the caller applies the batch at the
 * index. Deterministic: every replica, given the same state and entry, builds the same batch and
 * reply, which is what lets a compare-and-set be decided at apply time. Knows nothing of Ratis.
 *
 * <p>Never throws for a command: one that fails while being applied becomes a {@link
 * Reply.Rejected} with an empty batch, alike on every replica, so a poison entry cannot stop the
 * apply thread or be replayed into a crash on restart (CommandApplierTest).
 *
 * <p>Request ids make a retried write apply once: a request id already recorded (in the engine, or
 * earlier in the same entry) with the same command gets its first reply and adds nothing; with
 * another command it is rejected.
 */
public final class CommandApplier {
  private static final Logger LOG = LoggerFactory.getLogger(CommandApplier.class);

  /** Request ids recorded lately: most writes skip the engine lookup of their id. */
  private final RecentRequestIds recent = new RecentRequestIds();

  /** Whether changes carry the keys' previous values (for watches that ask for them). */
  private volatile boolean previousValues;

  /** Makes every change from now on carry its key's previous value (or stop carrying it). */
  public void capturePreviousValues(boolean capture) {
    this.previousValues = capture;
  }

  /**
   * The apply thread now applies to {@code state} (opened, or installed from a snapshot): the
   * recent request ids are read from its records. Until called, every id is looked up.
   */
  public void startFrom(Engine state) {
    recent.load(state, state.lastAppliedIndex());
  }

  /**
   * The batch to apply at the entry's index, the encoded reply to the client, the changes the batch
   * makes to user keys, in order (what watches see), and what it did to leases.
   */
  public record Applied(
      WriteBatch batch, byte[] reply, List<KeyChange> changes, List<LeaseEvent> leaseEvents) {}

  /**
   * The effects of {@code command}, committed at {@code index}, on {@code state} (the engine as of
   * index - 1). Also expires old request records every {@link RequestRecords#EXPIRY_EVERY} entries.
   */
  public Applied apply(Engine state, Command command, long index) {
    WriteBatch batch = new WriteBatch();
    try {
      if (index % RequestRecords.EXPIRY_EVERY == 0) {
        RequestRecords.expire(state, batch, index);
      }
      EntryView view = new EntryView(state, batch, index, previousValues);
      byte[] reply;
      if (command instanceof Command.Group g) {
        // Client writes the leader grouped into one entry: applied in order, in one engine batch.
        List<byte[]> replies = new ArrayList<>(g.commands().size());
        Map<ByteBuffer, Recorded> idsInEntry = new HashMap<>();
        for (Command c : g.commands()) {
          replies.add(applyOne(state, view, c, index, batch, idsInEntry));
        }
        reply = Reply.encode(new Reply.Many(index, replies));
      } else {
        reply = applyOne(state, view, command, index, batch, new HashMap<>());
      }
      return new Applied(batch, reply, view.changes(), view.leaseEvents());
    } catch (RuntimeException | StackOverflowError e) {
      LOG.warn("entry {} rejected: {} failed while being applied", index, kind(command), e);
      return rejected(index, kind(command) + " could not be applied: " + e.getClass().getName());
    }
  }

  /** A committed entry that applies nothing, answered with {@code message}. */
  public static Applied rejected(long index, String message) {
    return new Applied(
        new WriteBatch(), Reply.encode(new Reply.Rejected(index, message)), List.of(), List.of());
  }

  private static String kind(Command c) {
    return c == null ? "null" : c.getClass().getSimpleName();
  }

  /** A request id's reply within the entry being applied, and the command it answered. */
  private record Recorded(byte[] commandHash, byte[] reply) {}

  /**
   * Adds the effects of one command to {@code batch} and returns its encoded reply. {@code
   * idsInEntry} holds the request ids recorded earlier in the same entry.
   */
  private byte[] applyOne(
      Engine state,
      EntryView view,
      Command command,
      long index,
      WriteBatch batch,
      Map<ByteBuffer, Recorded> idsInEntry) {
    byte[] requestId = null;
    byte[] hash = null;
    if (command instanceof Command.Identified id) {
      requestId = id.requestId();
      command = id.command();
      hash = id.commandHash() != null ? id.commandHash() : RequestRecords.hash(command);
      Recorded sameEntry = idsInEntry.get(ByteBuffer.wrap(requestId));
      if (sameEntry != null) {
        return answerRetry(index, hash, sameEntry.commandHash(), sameEntry.reply(), state, command);
      }
      RequestRecords.Record earlier = RequestRecords.find(state, requestId, index, recent);
      if (earlier != null) {
        return answerRetry(index, hash, earlier.commandHash(), earlier.reply(), state, command);
      }
    }
    Reply reply;
    if (command instanceof Command.Batch b) {
      long missing = missingLease(view, b.ops());
      if (missing != 0) {
        reply = Reply.LeaseResult.notFound(index, missing);
      } else {
        for (Command.Op op : b.ops()) {
          write(view, op);
        }
        reply = new Reply.Written(index);
      }
    } else if (command instanceof Command.DeleteRange r) {
      reply = deleteRange(view, r, index);
    } else if (command instanceof Command.Auth a) {
      String refused = AuthApplier.apply(state, a.change(), batch);
      reply = refused == null ? new Reply.Written(index) : new Reply.Rejected(index, refused);
    } else if (command instanceof Command.Txn t) {
      reply = TxnApplier.apply(state, t, index, batch, view, previousValues);
    } else if (command instanceof Command.LeaseGrant g) {
      reply = LeaseApplier.grant(state, batch, view, g, index);
    } else if (command instanceof Command.LeaseRevoke r) {
      reply = LeaseApplier.revoke(state, batch, view, r.id(), index);
    } else if (command instanceof Command.LeaseKeepAlive k) {
      reply = LeaseApplier.keepAlive(state, view, k.id(), index);
    } else {
      reply = compareAndSet(view, (Command.CompareAndSet) command, index);
    }
    byte[] bytes = Reply.encode(reply);
    if (requestId != null) {
      byte[] stored = Reply.encode(storable(reply));
      RequestRecords.record(batch, requestId, index, hash, stored);
      recent.add(requestId, index);
      idsInEntry.put(ByteBuffer.wrap(requestId), new Recorded(hash, stored));
    }
    return bytes;
  }

  /**
   * The reply to a retry: the first attempt's, if it carried the same command; a rejection if the
   * id was used for another one. A compare-and-set's large current value was not stored: it is read
   * again, and is the value as of now.
   */
  private static byte[] answerRetry(
      long index, byte[] hash, byte[] recordedHash, byte[] stored, Engine state, Command command) {
    if (!Arrays.equals(hash, recordedHash)) {
      return Reply.encode(
          new Reply.Rejected(
              index,
              "request id already used for a different command (a retry must resend the same"
                  + " request)"));
    }
    Reply first = Reply.decode(stored);
    if (first instanceof Reply.TxnResult t && t.valuesOmitted()) {
      EntryView now = new EntryView(state, new WriteBatch(), index);
      List<Reply.OpResult> results = new ArrayList<>(t.results().size());
      for (Reply.OpResult o : t.results()) {
        results.add(
            o.kind() == Reply.OpKind.GET ? Reply.OpResult.got(o.key(), now.get(o.key())) : o);
      }
      return Reply.encode(new Reply.TxnResult(t.appliedIndex(), t.succeeded(), results, false));
    }
    if (first instanceof Reply.CasResult c
        && c.current() == null
        && c.modIndex() != 0
        && command instanceof Command.CompareAndSet cas) {
      VersionedValue now = state.getVersioned(cas.key());
      return Reply.encode(
          new Reply.CasResult(
              c.appliedIndex(),
              c.applied(),
              now == null ? null : now.value(),
              now == null ? 0 : now.index()));
    }
    return stored;
  }

  /**
   * What a request record keeps of {@code reply}: all of it but a large current value, or a
   * transaction's got values when they are large.
   */
  private static Reply storable(Reply reply) {
    if (reply instanceof Reply.TxnResult t) {
      long size = 0;
      for (Reply.OpResult o : t.results()) {
        size += o.encodedSize();
      }
      if (size <= RequestRecords.MAX_STORED_VALUE) {
        return reply;
      }
      List<Reply.OpResult> kept = new ArrayList<>(t.results().size());
      for (Reply.OpResult o : t.results()) {
        kept.add(o.kind() == Reply.OpKind.GET ? Reply.OpResult.got(o.key(), null) : o);
      }
      return new Reply.TxnResult(t.appliedIndex(), t.succeeded(), kept, true);
    }
    if (reply instanceof Reply.CasResult c
        && c.current() != null
        && c.current().length > RequestRecords.MAX_STORED_VALUE) {
      return new Reply.CasResult(c.appliedIndex(), c.applied(), null, c.modIndex());
    }
    return reply;
  }

  /**
   * Deletes up to {@code maxKeys} user keys of the range, never the node's own records (keys
   * starting with 0), and says where the rest of the range starts.
   */
  private static Reply deleteRange(EntryView view, Command.DeleteRange r, long index) {
    List<byte[]> keys = view.keysInRange(r.start(), r.end(), r.maxKeys() + 1);
    byte[] resume = keys.size() > r.maxKeys() ? keys.remove(r.maxKeys()) : null;
    for (byte[] k : keys) {
      view.delete(k);
    }
    return new Reply.RangeDeleted(index, keys.size(), resume);
  }

  /** The first lease {@code ops} attach keys to that does not live, or 0 if all do. */
  private static long missingLease(EntryView view, List<Command.Op> ops) {
    long checked = 0;
    for (Command.Op op : ops) {
      if (op.lease() != 0 && op.lease() != checked) {
        if (!view.leaseLives(op.lease())) {
          return op.lease();
        }
        checked = op.lease();
      }
    }
    return 0;
  }

  /** Compares the key's value or modification index with the expectation, then maybe writes. */
  private static Reply compareAndSet(EntryView view, Command.CompareAndSet cas, long index) {
    EntryView.KeyState current = view.get(cas.key());
    long currentIndex = current == null ? 0 : current.modIndex();
    boolean matches =
        cas.comparesIndex()
            ? currentIndex == cas.expectedIndex()
            : Arrays.equals(current == null ? null : current.value(), cas.expected());
    if (!matches) {
      return new Reply.CasResult(
          index, false, current == null ? null : current.value(), currentIndex);
    }
    if (!view.leaseLives(cas.then().lease())) {
      return Reply.LeaseResult.notFound(index, cas.then().lease());
    }
    write(view, cas.then());
    boolean deleted = cas.then().isDelete();
    return new Reply.CasResult(index, true, cas.then().value(), deleted ? 0 : index);
  }

  private static void write(EntryView view, Command.Op op) {
    if (op.isDelete()) {
      view.delete(op.key());
    } else {
      // The decoded command's arrays are this entry's own and nobody changes them.
      view.put(op.key(), op.value(), op.lease());
    }
  }
}
