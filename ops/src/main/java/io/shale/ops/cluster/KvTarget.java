package io.shale.ops.cluster;

/** One system under test, seen by the harness: blocking, thread-safe puts, gets and ranges. */
interface KvTarget extends AutoCloseable {
  void put(byte[] key, byte[] value);

  /** A linearizable read; returns the value's length, or -1 if the key is absent. */
  int get(byte[] key);

  /**
   * A transaction: if the key exists (version greater than 0), put {@code value}, else get it;
   * returns whether the put branch ran.
   */
  boolean txn(byte[] key, byte[] value);

  /**
   * A linearizable read of the keys in {@code [from, to)}; returns the bytes of their values (the
   * harness checks every key came back).
   */
  long range(byte[] from, byte[] to);

  /** The server processes, for CPU accounting (empty: not known). */
  default java.util.List<Process> servers() {
    return java.util.List.of();
  }

  /** Which of {@link #servers} leads (-1: not known). */
  default int leaderIndex() {
    return -1;
  }

  /**
   * Server {@code i}'s meters (Prometheus text parsed by {@link PutBreakdown#parse}), or null when
   * the system exposes none to the harness.
   */
  default java.util.Map<String, Double> meters(int i) {
    return null;
  }

  /** Frees what was started (processes, channels) and their data. */
  @Override
  void close();
}
