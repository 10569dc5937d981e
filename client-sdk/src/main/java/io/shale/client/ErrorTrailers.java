package io.shale.client;

import io.grpc.Metadata;

/**
 * The trailers a node attaches to a failed call, so that clients act on a reason rather than parse
 * a message: part of the API contract between the server and this SDK.
 *
 * <p>{@link #ERROR}, by status: INVALID_ARGUMENT {@code KEY_TOO_LARGE}, {@code VALUE_TOO_LARGE},
 * {@code TOO_MANY_OPERATIONS}, {@code SCAN_LIMIT_TOO_LARGE}, {@code REQUEST_REJECTED} (a committed
 * write every replica refused alike, e.g. a reused request id); INTERNAL {@code INTERNAL} (with an
 * incident id in the node's log); RESOURCE_EXHAUSTED {@code WRITE_THROTTLED}; UNAVAILABLE {@code
 * NO_LEADER} (no leader the node can reach); OUT_OF_RANGE {@code COMPACTED} (a watch's start index
 * is older than the node's change history, with {@link #COMPACT_INDEX}); RESOURCE_EXHAUSTED {@code
 * WATCHER_TOO_SLOW} (the history dropped changes a watch had not been sent yet); NOT_FOUND {@code
 * LEASE_NOT_FOUND} (a write named a lease that does not live, or a lease call one that never did or
 * no longer does).
 *
 * <p>With {@code WRITE_THROTTLED}: {@link #THROTTLED_NODE} (the replica whose engine refused, or
 * the leader for its own request queue), {@link #THROTTLE_CAUSE} ({@code L0_FILES}, {@code
 * PENDING_COMPACTION_BYTES}, {@code MEMTABLES}, {@code RAFT_PENDING_REQUESTS}), {@link
 * #RETRY_AFTER_MS}.
 */
public final class ErrorTrailers {
  public static final Metadata.Key<String> ERROR =
      Metadata.Key.of("shale-error", Metadata.ASCII_STRING_MARSHALLER);
  public static final Metadata.Key<String> THROTTLED_NODE =
      Metadata.Key.of("shale-throttled-node", Metadata.ASCII_STRING_MARSHALLER);
  public static final Metadata.Key<String> THROTTLE_CAUSE =
      Metadata.Key.of("shale-throttle-cause", Metadata.ASCII_STRING_MARSHALLER);
  public static final Metadata.Key<String> RETRY_AFTER_MS =
      Metadata.Key.of("shale-retry-after-ms", Metadata.ASCII_STRING_MARSHALLER);

  /** The oldest index a node's change history holds, with {@code COMPACTED}. */
  public static final Metadata.Key<String> COMPACT_INDEX =
      Metadata.Key.of("shale-compact-index", Metadata.ASCII_STRING_MARSHALLER);

  public static final String COMPACTED = "COMPACTED";
  public static final String WATCHER_TOO_SLOW = "WATCHER_TOO_SLOW";
  public static final String KEY_TOO_LARGE = "KEY_TOO_LARGE";
  public static final String VALUE_TOO_LARGE = "VALUE_TOO_LARGE";
  public static final String TOO_MANY_OPERATIONS = "TOO_MANY_OPERATIONS";
  public static final String SCAN_LIMIT_TOO_LARGE = "SCAN_LIMIT_TOO_LARGE";
  public static final String REQUEST_REJECTED = "REQUEST_REJECTED";
  public static final String INTERNAL = "INTERNAL";
  public static final String WRITE_THROTTLED = "WRITE_THROTTLED";
  public static final String NO_LEADER = "NO_LEADER";
  public static final String LEASE_NOT_FOUND = "LEASE_NOT_FOUND";

  private ErrorTrailers() {}
}
