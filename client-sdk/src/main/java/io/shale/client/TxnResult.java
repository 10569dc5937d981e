package io.shale.client;

import java.util.List;

/**
 * A transaction's outcome: whether its comparisons held (so its {@code then} operations applied,
 * else its {@code else} ones), the Raft index it applied at, and one result per operation of the
 * branch taken, in order.
 */
public record TxnResult(boolean succeeded, long index, List<OpResult> results) {
  /**
   * One operation's result: keys deleted (a delete or delete range; 0 for the others), and for a
   * get the entry found (null when absent, and for the other operations).
   */
  public record OpResult(long deleted, Entry entry) {}

  public TxnResult {
    results = List.copyOf(results);
  }

  /** The entry the {@code i}-th operation (a get) found, or null if the key was absent. */
  public Entry entry(int i) {
    return results.get(i).entry();
  }
}
