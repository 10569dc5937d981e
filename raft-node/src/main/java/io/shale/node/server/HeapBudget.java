package io.shale.node.server;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * How a node's Java heap is divided: every structure that grows with traffic or data has a bound
 * set by its own knob, and this adds them up. A node started on its own ({@link NodeMain}) refuses
 * to start when the parts need more than the heap less {@code memory.heap_headroom}; the parts and
 * their total are meters ({@code shale.heap.budget.bytes}, tagged by part), so that a node's live
 * heap can be held against them.
 *
 * <p>Each part is what its structure costs on the heap, object headers and copies included, not the
 * bytes of keys and values it holds: a write accepted on the API is held as the parsed request and
 * as its encoded log entry (two copies) until answered; a follower's forwarded writes reach the
 * leader's Raft port within the follower's own in-flight budget; a follower receives at most {@code
 * memory.raft_appends_in_flight} appends of at most the appender buffer each. A leader never holds
 * both its followers' appends and forwarded writes of its own making, so the Raft port's part is
 * the larger of the two.
 *
 * <p>The engine's memtables, table indexes and Bloom filters are not parts: they live in native
 * memory under their own knobs ({@code lsm.memtable_size}, {@code lsm.index_and_filter_memory}).
 */
public final class HeapBudget {
  /**
   * What a node holds whatever its traffic: gRPC and Netty state, TLS contexts, meters, Ratis's
   * server, the engine's open-file caches (three nodes of a local cluster after its demo: 32.5-33.6
   * MiB of live heap after a full collection, a partly filled memtable of a few MiB included).
   */
  static final long FIXED_BYTES = 32L << 20;

  /**
   * What one request in flight costs beyond its bytes: its gRPC call, context, futures and handler
   * task (a few KiB, rounded up).
   */
  static final long PER_REQUEST_BYTES = 4L << 10;

  /** One part of the budget: its name, the knobs that set it and its bytes. */
  public record Part(String name, String knobs, long bytes) {}

  private final List<Part> parts;
  private final double headroom;

  private HeapBudget(List<Part> parts, double headroom) {
    this.parts = List.copyOf(parts);
    this.headroom = headroom;
  }

  /** The budget of a node with configuration {@code c}. */
  public static HeapBudget of(NodeConfig c) {
    List<Part> parts = new ArrayList<>();
    parts.add(
        new Part(
            "table_builds",
            "(lsm.compaction.threads + 1) x 12 MiB",
            c.engine().tableBuildHeapBytes()));
    parts.add(new Part("watch_history", "watch.history_size", c.watch().historyBytes()));
    NodeConfig.Limits l = c.limits();
    parts.add(
        new Part(
            "requests_in_flight",
            "2 x limits.max_inflight_write_bytes + limits.max_inflight_requests x 4 KiB",
            2 * l.maxInflightWriteBytes() + l.maxInflightRequests() * PER_REQUEST_BYTES));
    parts.add(
        new Part(
            "raft_log_cache",
            "memory.raft_log_cache + raft.log_segment_size",
            c.memory().raftLogCacheBytes() + c.raft().logSegmentSize()));
    long forwarded = (long) (c.peers().size() - 1) * l.maxInflightWriteBytes();
    long appends = c.memory().raftAppendsInFlight() * appendBytes(c);
    parts.add(
        new Part(
            "raft_inbound",
            "max((peers - 1) x limits.max_inflight_write_bytes,"
                + " memory.raft_appends_in_flight x largest append)",
            Math.max(forwarded, appends)));
    parts.add(new Part("fixed", "(measured)", FIXED_BYTES));
    return new HeapBudget(parts, c.memory().heapHeadroom());
  }

  /**
   * The most bytes one append to a follower carries (Ratis's appender buffer): room for the largest
   * log entry, a whole value with its key, or a full group of writes.
   */
  public static long appendBytes(NodeConfig c) {
    return Math.max(4L << 20, (long) c.limits().maxMessageBytes() + c.raft().groupCommitMaxBytes());
  }

  public List<Part> parts() {
    return parts;
  }

  /** The sum of every part: the most live heap the node should ever hold. */
  public long total() {
    return parts.stream().mapToLong(Part::bytes).sum();
  }

  /** The heap the parts may use of {@code maxHeap}: all of it but the headroom. */
  public long usable(long maxHeap) {
    return (long) (maxHeap * (1 - headroom));
  }

  /**
   * Null when the budget fits a heap of {@code maxHeap} bytes with its headroom, else why not,
   * naming every part and its knobs.
   */
  public String misfit(long maxHeap) {
    if (total() <= usable(maxHeap)) {
      return null;
    }
    return "the node's memory budgets need "
        + mib(total())
        + " of heap but the JVM's maximum heap of "
        + mib(maxHeap)
        + " leaves "
        + mib(usable(maxHeap))
        + " after memory.heap_headroom ("
        + headroom
        + "): raise -Xmx or lower the budgets ("
        + describe()
        + ")";
  }

  /** Every part as "name MiB (knobs)", for logs and errors. */
  public String describe() {
    List<String> out = new ArrayList<>();
    for (Part p : parts) {
      out.add(p.name() + " " + mib(p.bytes()) + " (" + p.knobs() + ")");
    }
    return String.join(", ", out);
  }

  /**
   * Null when G1 is not in use or its regions are at least {@link #MIN_G1_REGION_BYTES}, else a
   * warning: G1 stores an array of half a region or more in whole regions of its own, so with the 1
   * MiB regions it picks for a 512 MiB heap a 1 MiB value (or a group of writes, or an append)
   * takes two regions, twice what the budget counts; 1,000 concurrent 1 MiB puts then ran such
   * nodes out of heap (docs/postmortems/18). The start scripts set 4 MiB regions.
   */
  public static String regionWarning() {
    if (!JvmOptions.on("UseG1GC")) {
      return null;
    }
    long region = JvmOptions.value("G1HeapRegionSize").map(Long::parseLong).orElse(0L);
    if (region >= MIN_G1_REGION_BYTES) {
      return null;
    }
    return "G1's regions are "
        + (region >> 10)
        + " KiB: every value, write group or append of "
        + (region >> 11)
        + " KiB or more takes whole regions, up to twice what the heap budget counts; start"
        + " the JVM with -XX:G1HeapRegionSize=4m (the start scripts do)";
  }

  /** The smallest G1 region size with which the budget's costs hold for values up to 1 MiB. */
  static final long MIN_G1_REGION_BYTES = 4L << 20;

  /** Registers {@code shale.heap.budget.bytes} for every part and for the total. */
  public void register(MeterRegistry registry, String node) {
    for (Part p : parts) {
      Gauge.builder("shale.heap.budget.bytes", p::bytes)
          .tag("node", node)
          .tag("part", p.name())
          .description("the most heap this part of the node may hold, by its knobs")
          .register(registry);
    }
    long total = total();
    Gauge.builder("shale.heap.budget.bytes", () -> total)
        .tag("node", node)
        .tag("part", "total")
        .register(registry);
  }

  private static String mib(long bytes) {
    return (bytes >> 20) + " MiB";
  }
}
