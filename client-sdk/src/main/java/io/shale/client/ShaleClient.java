package io.shale.client;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.Consistency;
import io.shale.client.proto.DeleteRangeRequest;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.ListMembersRequest;
import io.shale.client.proto.MembersResponse;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client of a Shale cluster: thread-safe, one channel per endpoint shared by every call; close it
 * when done.
 *
 * <pre>{@code
 * try (ShaleClient client = ShaleClient.builder().endpoints("127.0.0.1:7201", "127.0.0.1:7202")
 *     .build()) {
 *   client.put("greeting", "hello");
 *   Entry e = client.get("greeting");                          // null if absent
 *   client.compareAndSet("counter", Expectation.absent(), "1"); // create if absent
 *   for (Entry x : client.scanPrefix("user/").limit(100)) { ... }
 * }
 * }</pre>
 *
 * <p>Every operation has a synchronous form, which throws a {@link ShaleException} subclass, and an
 * {@code ...Async} form, whose future fails with one. Any node answers (followers forward to the
 * leader); the client learns which configured endpoint is the leader and sends there first.
 *
 * <p>Failures: a node down or unreachable, or a cluster without a leader yet, is retried on the
 * next endpoint per the {@link RetryPolicy}; a throttled write waits the server's retry-after hint
 * per the {@link ThrottlePolicy}; everything happens within the call's deadline. Writes carry a
 * request id ({@link RequestIds}) kept across retries, which the server deduplicates, so a retried
 * write is applied once (unlike etcd's clients, which cannot retry writes safely).
 */
public final class ShaleClient implements AutoCloseable {
  private static final RequestIds IDS = RequestIds.create();

  private final Endpoints endpoints;
  private final ReadConsistency readConsistency;
  private final ScheduledExecutorService timer;
  private final RetryingCall.Settings settings;
  private final AtomicBoolean discovering = new AtomicBoolean();
  private final ClusterAdmin cluster;
  private final AuthAdmin auth;
  private final Leases leases;

  private ShaleClient(Builder b) {
    PasswordCredentials password =
        b.user == null ? null : new PasswordCredentials(b.user, b.password);
    ChannelCredentials credentials =
        password == null
            ? credentials(b.tls)
            : CompositeChannelCredentials.create(credentials(b.tls), password);
    this.endpoints =
        new Endpoints(
            b.endpoints,
            address ->
                Grpc.newChannelBuilder(address, credentials)
                    .maxInboundMessageSize(b.maxMessageBytes)
                    .build());
    this.readConsistency = b.readConsistency;
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "shale-client-timer");
              thread.setDaemon(true);
              return thread;
            });
    // Every call schedules its deadline watchdog and cancels it when answered: drop those.
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
    this.settings =
        new RetryingCall.Settings(
            endpoints,
            b.deadline,
            b.retry,
            b.throttle,
            timer,
            new ClientMetrics(b.registry),
            this::discoverLeader,
            b.spreadReads);
    this.cluster = new ClusterAdmin(settings);
    this.auth = new AuthAdmin(settings);
    this.leases = new Leases(settings, this::opened);
    if (password != null) {
      password.authenticateThrough(() -> endpoints.channel(endpoints.preferred()));
    }
    discoverLeader();
  }

  private static ChannelCredentials credentials(TlsSettings tls) {
    if (tls == null) {
      return InsecureChannelCredentials.create();
    }
    try {
      TlsChannelCredentials.Builder c = TlsChannelCredentials.newBuilder();
      if (tls.trustCertificates() != null) {
        c.trustManager(tls.trustCertificates().toFile());
      }
      if (tls.clientCertificate() != null) {
        c.keyManager(tls.clientCertificate().toFile(), tls.clientKey().toFile());
      }
      return c.build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the TLS files " + tls, e);
    }
  }

  /** A builder; only the endpoints are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** How a client is made; every setting has a default but the endpoints. */
  public static final class Builder {
    private final List<String> endpoints = new ArrayList<>();
    private Duration deadline = Duration.ofSeconds(10);
    private RetryPolicy retry = RetryPolicy.defaults();
    private ThrottlePolicy throttle = ThrottlePolicy.defaults();
    private ReadConsistency readConsistency = ReadConsistency.LINEARIZABLE;
    private TlsSettings tls;
    private MeterRegistry registry;
    private int maxMessageBytes = 32 << 20;
    private String user;
    private String password;
    private boolean spreadReads = true;

    private Builder() {}

    /** Nodes' API addresses, {@code HOST:PORT}; at least one (all of them is best). */
    public Builder endpoints(String... hostPorts) {
      for (String e : hostPorts) {
        for (String one : e.split(",")) {
          String a = one.strip();
          int colon = a.lastIndexOf(':');
          if (colon <= 0 || colon == a.length() - 1 || !a.substring(colon + 1).matches("\\d+")) {
            throw new IllegalArgumentException("endpoint '" + a + "' is not HOST:PORT");
          }
          endpoints.add(a);
        }
      }
      return this;
    }

    /** How long a call may take, retries included (default 10 s). */
    public Builder deadline(Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("deadline must be positive, got " + d);
      }
      this.deadline = d;
      return this;
    }

    /** How transient failures are retried (default {@link RetryPolicy#defaults()}). */
    public Builder retryPolicy(RetryPolicy p) {
      this.retry = p;
      return this;
    }

    /** How throttled writes are retried (default {@link ThrottlePolicy#defaults()}). */
    public Builder throttlePolicy(ThrottlePolicy p) {
      this.throttle = p;
      return this;
    }

    /** The consistency of reads that do not name one (default LINEARIZABLE). */
    public Builder readConsistency(ReadConsistency c) {
      this.readConsistency = c;
      return this;
    }

    /**
     * Where reads go (default true): each get or scan page to the next healthy endpoint in turn, so
     * that reads spread over every node (each answers linearizable reads itself, after a read index
     * from the leader); false: to the leader, as writes always do.
     */
    public Builder spreadReads(boolean spread) {
      this.spreadReads = spread;
      return this;
    }

    /**
     * Make calls as {@code user} with {@code password} (a token from Auth.Authenticate, renewed
     * before it expires), instead of as the user the client certificate names. Needs {@link #tls}:
     * a password is never sent in plaintext.
     */
    public Builder credentials(String user, String password) {
      this.user = user;
      this.password = password;
      return this;
    }

    /** TLS for every channel (default: plaintext; a secure cluster refuses it). */
    public Builder tls(TlsSettings t) {
      this.tls = t;
      return this;
    }

    /**
     * Where to record {@code shale.client.requests} (latency by operation and outcome) and {@code
     * shale.client.retries} (by operation and reason); default none.
     */
    public Builder meterRegistry(MeterRegistry r) {
      this.registry = r;
      return this;
    }

    /** The largest response accepted (default 32 MiB, above the server's 16 MiB values). */
    public Builder maxMessageBytes(int bytes) {
      this.maxMessageBytes = bytes;
      return this;
    }

    public ShaleClient build() {
      if (endpoints.isEmpty()) {
        throw new IllegalArgumentException("at least one endpoint (HOST:PORT) is needed");
      }
      if (user != null && tls == null) {
        throw new IllegalArgumentException(
            "credentials need TLS (tls(...)): a password is never sent in plaintext");
      }
      return new ShaleClient(this);
    }
  }

  /** Users, roles and permissions: who may do what ({@code shale/v1/auth.proto}). */
  public AuthAdmin auth() {
    return auth;
  }

  /** Membership, leadership, status, snapshots and compactions: the cluster's administration. */
  public ClusterAdmin cluster() {
    return cluster;
  }

  // ------------------------------------------------------------------------------------------
  // Reads

  /** The value of {@code key} with its modification index, or null if absent. */
  public CompletableFuture<Entry> getAsync(byte[] key, ReadConsistency consistency) {
    GetRequest req =
        GetRequest.newBuilder()
            .setKey(ByteString.copyFrom(key))
            .setConsistency(wire(consistency))
            .build();
    return RetryingCall.startRead(
            settings,
            "get",
            (ch, t) ->
                KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).get(req))
        .thenApply(
            r ->
                r.getFound()
                    ? new Entry(
                        key.clone(),
                        r.getValue().toByteArray(),
                        r.getModIndex(),
                        r.getCreateIndex(),
                        r.getVersion())
                    : null);
  }

  public CompletableFuture<Entry> getAsync(byte[] key) {
    return getAsync(key, readConsistency);
  }

  public Entry get(byte[] key, ReadConsistency consistency) {
    return join(getAsync(key, consistency));
  }

  public Entry get(byte[] key) {
    return join(getAsync(key));
  }

  public Entry get(String key) {
    return get(utf8(key));
  }

  /**
   * The keys in [start, end) (end null: to the last key), fetched page by page as the iteration
   * goes; set limit, direction and page size on the returned {@link Scan}.
   */
  public Scan scan(byte[] start, byte[] end) {
    return new Scan(settings, start.clone(), end == null ? null : end.clone(), readConsistency);
  }

  public Scan scan(String start, String end) {
    return scan(utf8(start), end == null ? null : utf8(end));
  }

  /** The keys that begin with {@code prefix}. */
  public Scan scanPrefix(byte[] prefix) {
    return scan(prefix, prefixEnd(prefix));
  }

  public Scan scanPrefix(String prefix) {
    return scanPrefix(utf8(prefix));
  }

  // ------------------------------------------------------------------------------------------
  // Writes

  public CompletableFuture<Void> putAsync(byte[] key, byte[] value) {
    return putAsync(key, value, 0);
  }

  public void put(byte[] key, byte[] value) {
    join(putAsync(key, value));
  }

  /**
   * Puts {@code value} under {@code key}, attached to lease {@code leaseId} (0: none): the key is
   * deleted when the lease is revoked or expires. Fails with {@link LeaseNotFoundException}, having
   * written nothing, if the lease does not live.
   */
  public CompletableFuture<Void> putAsync(byte[] key, byte[] value, long leaseId) {
    PutRequest req =
        PutRequest.newBuilder()
            .setKey(ByteString.copyFrom(key))
            .setValue(ByteString.copyFrom(value))
            .setLease(leaseId)
            .setRequestId(requestId())
            .build();
    return RetryingCall.start(
            settings,
            "put",
            (ch, t) ->
                KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).put(req))
        .thenApply(r -> null);
  }

  public void put(byte[] key, byte[] value, long leaseId) {
    join(putAsync(key, value, leaseId));
  }

  public void put(String key, String value, long leaseId) {
    join(putAsync(utf8(key), utf8(value), leaseId));
  }

  public void put(String key, String value) {
    put(utf8(key), utf8(value));
  }

  public CompletableFuture<Void> deleteAsync(byte[] key) {
    DeleteRequest req =
        DeleteRequest.newBuilder()
            .setKey(ByteString.copyFrom(key))
            .setRequestId(requestId())
            .build();
    return RetryingCall.start(
            settings,
            "delete",
            (ch, t) ->
                KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).delete(req))
        .thenApply(r -> null);
  }

  public void delete(byte[] key) {
    join(deleteAsync(key));
  }

  public void delete(String key) {
    delete(utf8(key));
  }

  /**
   * Deletes every key in [start, end) (end null: to the last key). The node deletes a large range
   * in bounded chunks, each atomic, and answers where to resume when its deadline nears; this
   * continues until the range is empty. Writes made meanwhile to the part not yet deleted may be
   * deleted too: use a batch or compare-and-set where atomicity matters.
   */
  public CompletableFuture<Void> deleteRangeAsync(byte[] start, byte[] end) {
    return deleteRangeFrom(start, end);
  }

  private CompletableFuture<Void> deleteRangeFrom(byte[] start, byte[] end) {
    DeleteRangeRequest.Builder b =
        DeleteRangeRequest.newBuilder()
            .setStart(ByteString.copyFrom(start))
            .setRequestId(requestId());
    if (end != null) {
      b.setEnd(ByteString.copyFrom(end));
    }
    DeleteRangeRequest req = b.build();
    return RetryingCall.start(
            settings,
            "deleteRange",
            (ch, t) ->
                KVGrpc.newFutureStub(ch)
                    .withDeadlineAfter(t, TimeUnit.MILLISECONDS)
                    .deleteRange(req))
        .thenCompose(
            r ->
                r.getMore()
                    ? deleteRangeFrom(r.getResumeFrom().toByteArray(), end)
                    : CompletableFuture.completedFuture(null));
  }

  public void deleteRange(byte[] start, byte[] end) {
    join(deleteRangeAsync(start, end));
  }

  public void deleteRange(String start, String end) {
    deleteRange(utf8(start), end == null ? null : utf8(end));
  }

  /** Deletes every key that begins with {@code prefix} (see {@link #deleteRangeAsync}). */
  public void deletePrefix(String prefix) {
    deleteRange(utf8(prefix), prefixEnd(utf8(prefix)));
  }

  /** Puts and deletes to apply together or not at all: {@code client.batch().put(..).commit()}. */
  public Batch batch() {
    return new Batch(settings, requestId());
  }

  /**
   * Watches the keys of {@code options} from its start index: {@code listener} receives every
   * change in index order, exactly once, while the watch follows node failures; close it to stop.
   */
  public Watch watch(WatchOptions options, WatchListener listener) {
    Watch w = new Watch(settings, options, listener);
    opened(w);
    w.open();
    return w;
  }

  /** Leases: grant, revoke, time to live, list, and keeping one alive. */
  public Leases leases() {
    return leases;
  }

  /**
   * Takes a backup of the node this client prefers (the leader once known; a client of one endpoint
   * chooses the node) into the empty directory {@code dir}, sharing unchanged files with the
   * earlier backup {@code base} (null for a full one). Needs ADMIN. See {@link
   * io.shale.client.backup.BackupSave}.
   */
  public io.shale.client.backup.BackupSave.Result backup(
      java.nio.file.Path dir,
      java.nio.file.Path base,
      io.shale.client.backup.BackupSave.Progress progress)
      throws java.io.IOException {
    return io.shale.client.backup.BackupSave.save(
        endpoints.channel(endpoints.preferred()), dir, base, progress);
  }

  /** Streams this client opened (watches, lease keepers): closed first when the client closes. */
  private final java.util.Set<AutoCloseable> streams =
      java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());

  private void opened(AutoCloseable stream) {
    synchronized (streams) {
      streams.add(stream);
    }
  }

  /**
   * A transaction: compares, then operations if they all hold, else others, applied atomically:
   * {@code client.txn().ifVersion("k", Txn.Cmp.EQUAL, 0).thenPut("k", "v").commit()}.
   */
  public Txn txn() {
    return new Txn(settings, requestId());
  }

  /**
   * Sets {@code key} to {@code newValue} (null: deletes it) only if the key meets {@code expected};
   * says whether it did and what the key holds after the call.
   */
  public CompletableFuture<CasResult> compareAndSetAsync(
      byte[] key, Expectation expected, byte[] newValue) {
    ByteString k = ByteString.copyFrom(key);
    CompareAndSetRequest.Builder b =
        CompareAndSetRequest.newBuilder()
            .setKey(k)
            .setRequestId(requestId())
            .setThen(
                newValue == null
                    ? Op.newBuilder().setDelete(k).build()
                    : Op.newBuilder()
                        .setPut(
                            KeyValue.newBuilder().setKey(k).setValue(ByteString.copyFrom(newValue)))
                        .build());
    switch (expected.kind) {
      case VALUE -> b.setExpectedValue(ByteString.copyFrom(expected.value));
      case ABSENT -> b.setExpectedAbsent(true);
      case MOD_INDEX -> b.setExpectedModIndex(expected.modIndex);
    }
    CompareAndSetRequest req = b.build();
    return RetryingCall.start(
            settings,
            "compareAndSet",
            (ch, t) ->
                KVGrpc.newFutureStub(ch)
                    .withDeadlineAfter(t, TimeUnit.MILLISECONDS)
                    .compareAndSet(req))
        .thenApply(r -> casResult(key, r));
  }

  public CasResult compareAndSet(byte[] key, Expectation expected, byte[] newValue) {
    return join(compareAndSetAsync(key, expected, newValue));
  }

  public CasResult compareAndSet(String key, Expectation expected, String newValue) {
    return compareAndSet(utf8(key), expected, newValue == null ? null : utf8(newValue));
  }

  private static CasResult casResult(byte[] key, CompareAndSetResponse r) {
    return new CasResult(
        r.getApplied(),
        r.getFound()
            ? new Entry(key.clone(), r.getCurrent().toByteArray(), r.getModIndex())
            : null);
  }

  // ------------------------------------------------------------------------------------------

  /**
   * Asks the cluster who leads and prefers that endpoint; at most one question in flight, and a
   * failure changes nothing (the next failed call asks again).
   */
  private void discoverLeader() {
    if (!discovering.compareAndSet(false, true)) {
      return;
    }
    int endpoint = endpoints.preferred();
    try {
      Futures.addCallback(
          ClusterGrpc.newFutureStub(endpoints.channel(endpoint))
              .withDeadlineAfter(2, TimeUnit.SECONDS)
              .listMembers(ListMembersRequest.getDefaultInstance()),
          new FutureCallback<>() {
            @Override
            public void onSuccess(MembersResponse m) {
              m.getMembersList().stream()
                  .filter(x -> x.getId().equals(m.getLeaderId()))
                  .findFirst()
                  .ifPresent(x -> endpoints.leaderAt(x.getApiAddress()));
              discovering.set(false);
            }

            @Override
            public void onFailure(Throwable t) {
              discovering.set(false);
            }
          },
          MoreExecutors.directExecutor());
    } catch (RuntimeException closed) {
      discovering.set(false);
    }
  }

  static Consistency wire(ReadConsistency c) {
    return c == ReadConsistency.STALE ? Consistency.STALE : Consistency.LINEARIZABLE;
  }

  /** The first key after every key beginning with {@code prefix}; null if there is none. */
  static byte[] prefixEnd(byte[] prefix) {
    byte[] end = Arrays.copyOf(prefix, prefix.length);
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xFF) {
        end[i]++;
        return Arrays.copyOf(end, i + 1);
      }
    }
    return null;
  }

  static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof ShaleException s) {
        // Rethrown on the caller's thread: keep the caller's stack in the trace.
        s.addSuppressed(new Exception("called from here"));
        throw s;
      }
      throw e;
    }
  }

  static ByteString requestId() {
    return ByteString.copyFrom(IDS.next());
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Stops the client: calls in flight fail, channels close. */
  @Override
  public void close() {
    List<AutoCloseable> open;
    synchronized (streams) {
      open = new ArrayList<>(streams);
      streams.clear();
    }
    // First, so that none of them resumes on a closed channel or a stopped timer.
    for (AutoCloseable s : open) {
      try {
        s.close();
      } catch (Exception e) {
        // closing a stream that already failed: nothing more to do
      }
    }
    endpoints.close();
    // Retries waiting for their backoff run now, on the closed channels, so their calls fail
    // rather than never completing.
    for (Runnable pending : timer.shutdownNow()) {
      pending.run();
    }
  }
}
