package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.WriteBatch;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies one transaction: evaluates its compares against the applied state, then runs the branch
 * they choose, in order, into a batch of its own, which joins the entry's batch only if the whole
 * branch applied. A transaction the state makes too large (a delete range over more than {@link
 * #MAX_RANGE_KEYS} keys, gets returning more than {@link #MAX_REPLY_BYTES}) is rejected whole, the
 * same on every replica, and writes nothing; so is one whose branch puts a key on a lease that does
 * not live.
 */
final class TxnApplier {
  /** The most keys one delete range of a transaction may delete (it must apply in one entry). */
  static final int MAX_RANGE_KEYS = 10_000;

  /** The most bytes of results a transaction may return (its gets' keys and values). */
  static final long MAX_REPLY_BYTES = 32L << 20;

  private TxnApplier() {}

  /**
   * Applies {@code t} at {@code index}; if it applies, its writes are added to {@code entryBatch}
   * and its changes to {@code entryView}'s.
   */
  static Reply apply(
      Engine state,
      Command.Txn t,
      long index,
      WriteBatch entryBatch,
      EntryView entryView,
      boolean previousValues) {
    WriteBatch own = new WriteBatch();
    EntryView view = new EntryView(state, own, index, previousValues);
    boolean succeeded = true;
    for (Compare c : t.compares()) {
      if (!c.holds(view.get(c.key()))) {
        succeeded = false;
        break;
      }
    }
    List<TxnOp> branch = succeeded ? t.then() : t.otherwise();
    for (TxnOp op : branch) {
      if (op instanceof TxnOp.Put p && !view.leaseLives(p.lease())) {
        return Reply.LeaseResult.notFound(index, p.lease());
      }
    }
    List<Reply.OpResult> results = new ArrayList<>(branch.size());
    long replyBytes = 0;
    for (TxnOp op : branch) {
      Reply.OpResult r;
      if (op instanceof TxnOp.Put p) {
        view.put(p.key(), p.value(), p.lease());
        r = Reply.OpResult.put();
      } else if (op instanceof TxnOp.Delete d) {
        r = Reply.OpResult.deleted(Reply.OpKind.DELETE, view.delete(d.key()) ? 1 : 0);
      } else if (op instanceof TxnOp.DeleteRange d) {
        List<byte[]> keys = view.keysInRange(d.start(), d.end(), MAX_RANGE_KEYS + 1);
        if (keys.size() > MAX_RANGE_KEYS) {
          return new Reply.Rejected(
              index,
              "a delete range in a transaction may delete at most "
                  + MAX_RANGE_KEYS
                  + " keys; this one covers more (use DeleteRange outside a transaction)");
        }
        for (byte[] k : keys) {
          view.delete(k);
        }
        r = Reply.OpResult.deleted(Reply.OpKind.DELETE_RANGE, keys.size());
      } else {
        byte[] key = ((TxnOp.Get) op).key();
        r = Reply.OpResult.got(key, view.get(key));
        replyBytes += r.encodedSize();
        if (replyBytes > MAX_REPLY_BYTES) {
          return new Reply.Rejected(
              index,
              "a transaction's gets may return at most "
                  + MAX_REPLY_BYTES
                  + " bytes; these return more");
        }
      }
      results.add(r);
    }
    entryBatch.addAll(own);
    entryView.changes().addAll(view.changes());
    return new Reply.TxnResult(index, succeeded, results, false);
  }
}
