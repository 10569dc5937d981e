package io.shale.client;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.CompareAndSetResponse;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.ScanResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A client of a Shale cluster: thread-safe, one channel per endpoint shared by every call;
 * close it when done.
 *
 * <pre>{@code
 * try (ShaleClient client = ShaleClient.builder().endpoints("127.0.0.1:7201", "127.0.0.1:7202")
 *     .build()) {
 *   client.put("greeting", "hello");
 *   Entry e = client.get("greeting");            // null if absent
 *   client.compareAndSet("counter", null, "1");  // create if absent
 * }
 * }</pre>
 *
 * <p>Any node answers (followers forward to the leader). A call that fails with UNAVAILABLE or
 * a deadline moves to the next endpoint and is retried with exponential backoff and jitter, up to
 * {@link Builder#maxAttempts}; a throttled write waits the server's retry-after hint. Writes
 * carry a random request id kept across retries, which the server deduplicates, so a retried
 * write applies once.
 */
public final class ShaleClient implements AutoCloseable {
  private static final SecureRandom IDS = new SecureRandom();
  private static final Pattern RETRY_AFTER = Pattern.compile("retry after (\\d+) ms");

  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<String> endpoints;
  private final AtomicInteger current = new AtomicInteger();
  private final Duration deadline;
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final ScheduledExecutorService retries;

  private ShaleClient(Builder b) {
    this.endpoints = List.copyOf(b.endpoints);
    this.deadline = b.deadline;
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    for (String e : endpoints) {
      channels.add(NettyChannelBuilder.forTarget(e).usePlaintext()
          .maxInboundMessageSize(b.maxMessageBytes).build());
    }
    retries = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "shale-client-retry");
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How a client is made; every setting has a default but the endpoints. */
  public static final class Builder {
    private final List<String> endpoints = new ArrayList<>();
    private Duration deadline = Duration.ofSeconds(10);
    private int maxAttempts = 5;
    private Duration initialBackoff = Duration.ofMillis(50);
    private Duration maxBackoff = Duration.ofSeconds(2);
    private int maxMessageBytes = 32 << 20;

    private Builder() {}

    /** Nodes' API addresses, HOST:PORT; at least one. */
    public Builder endpoints(String... hostPorts) {
      endpoints.addAll(Arrays.asList(hostPorts));
      return this;
    }

    /** Each attempt's deadline (default 10 s). */
    public Builder deadline(Duration d) {
      this.deadline = d;
      return this;
    }

    /** Attempts per call, the first included (default 5). */
    public Builder maxAttempts(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, got " + n);
      }
      this.maxAttempts = n;
      return this;
    }

    /** Backoff between attempts: doubling from {@code initial} up to {@code max}, with jitter. */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
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
      return new ShaleClient(this);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Operations

  /** The value of {@code key} with its modification index, or null if absent (linearizable). */
  public CompletableFuture<Entry> getAsync(byte[] key) {
    GetRequest req = GetRequest.newBuilder().setKey(ByteString.copyFrom(key)).build();
    return call(s -> s.get(req)).thenApply(r -> r.getFound()
        ? new Entry(key, r.getValue().toByteArray(), r.getModIndex()) : null);
  }

  public Entry get(byte[] key) {
    return join(getAsync(key));
  }

  public Entry get(String key) {
    return get(utf8(key));
  }

  public CompletableFuture<Void> putAsync(byte[] key, byte[] value) {
    PutRequest req = PutRequest.newBuilder().setKey(ByteString.copyFrom(key))
        .setValue(ByteString.copyFrom(value)).setRequestId(requestId()).build();
    return call(s -> s.put(req)).thenApply(r -> null);
  }

  public void put(byte[] key, byte[] value) {
    join(putAsync(key, value));
  }

  public void put(String key, String value) {
    put(utf8(key), utf8(value));
  }

  public CompletableFuture<Void> deleteAsync(byte[] key) {
    DeleteRequest req = DeleteRequest.newBuilder().setKey(ByteString.copyFrom(key))
        .setRequestId(requestId()).build();
    return call(s -> s.delete(req)).thenApply(r -> null);
  }

  public void delete(byte[] key) {
    join(deleteAsync(key));
  }

  public void delete(String key) {
    delete(utf8(key));
  }

  /**
   * Sets {@code key} to {@code newValue} (null: deletes it) only if its current value is
   * {@code expected} (null: the key must be absent); true if it did.
   */
  public CompletableFuture<Boolean> compareAndSetAsync(byte[] key, byte[] expected,
      byte[] newValue) {
    CompareAndSetRequest.Builder b = CompareAndSetRequest.newBuilder()
        .setKey(ByteString.copyFrom(key)).setRequestId(requestId())
        .setThen(newValue == null ? Op.newBuilder().setDelete(ByteString.copyFrom(key)).build()
            : Op.newBuilder().setPut(KeyValue.newBuilder().setKey(ByteString.copyFrom(key))
                .setValue(ByteString.copyFrom(newValue))).build());
    if (expected == null) {
      b.setExpectedAbsent(true);
    } else {
      b.setExpectedValue(ByteString.copyFrom(expected));
    }
    CompareAndSetRequest req = b.build();
    return call(s -> s.compareAndSet(req)).thenApply(CompareAndSetResponse::getApplied);
  }

  public boolean compareAndSet(byte[] key, byte[] expected, byte[] newValue) {
    return join(compareAndSetAsync(key, expected, newValue));
  }

  public boolean compareAndSet(String key, String expected, String newValue) {
    return compareAndSet(utf8(key), expected == null ? null : utf8(expected),
        newValue == null ? null : utf8(newValue));
  }

  /**
   * The keys in [start, end) (end null: to the last key) in order, fetched lazily
   * {@code pageSize} at a time (each page a linearizable read) as the iteration goes.
   */
  public Iterable<Entry> scan(byte[] start, byte[] end, int pageSize) {
    if (pageSize < 1) {
      throw new IllegalArgumentException("pageSize must be at least 1, got " + pageSize);
    }
    return () -> new Iterator<>() {
      private byte[] from = start;
      private Iterator<KeyValue> page = List.<KeyValue>of().iterator();
      private boolean more = true;

      @Override
      public boolean hasNext() {
        while (!page.hasNext() && more) {
          ScanRequest.Builder req = ScanRequest.newBuilder().setStart(ByteString.copyFrom(from))
              .setLimit(pageSize);
          if (end != null) {
            req.setEnd(ByteString.copyFrom(end));
          }
          ScanRequest r = req.build();
          ScanResponse resp = join(call(s -> s.scan(r)));
          page = resp.getEntriesList().iterator();
          more = resp.getMore();
          if (resp.getEntriesCount() > 0) {
            // Continue just after the last key returned.
            byte[] last = resp.getEntries(resp.getEntriesCount() - 1).getKey().toByteArray();
            from = Arrays.copyOf(last, last.length + 1);
          }
        }
        return page.hasNext();
      }

      @Override
      public Entry next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        KeyValue kv = page.next();
        return new Entry(kv.getKey().toByteArray(), kv.getValue().toByteArray(), 0);
      }
    };
  }

  public Iterable<Entry> scan(String start, String end, int pageSize) {
    return scan(utf8(start), end == null ? null : utf8(end), pageSize);
  }

  // ------------------------------------------------------------------------------------------
  // Calls, retries and errors

  private <T> CompletableFuture<T> call(
      Function<KVGrpc.KVFutureStub, ListenableFuture<T>> rpc) {
    CompletableFuture<T> result = new CompletableFuture<>();
    attempt(rpc, 1, result);
    return result;
  }

  private <T> void attempt(Function<KVGrpc.KVFutureStub, ListenableFuture<T>> rpc, int n,
      CompletableFuture<T> result) {
    int endpoint = Math.floorMod(current.get(), channels.size());
    KVGrpc.KVFutureStub stub = KVGrpc.newFutureStub(channels.get(endpoint))
        .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    Futures.addCallback(rpc.apply(stub), new FutureCallback<T>() {
      @Override
      public void onSuccess(T value) {
        result.complete(value);
      }

      @Override
      public void onFailure(Throwable t) {
        Status status = Status.fromThrowable(t);
        Status.Code code = status.getCode();
        boolean retriable = code == Status.Code.UNAVAILABLE
            || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.RESOURCE_EXHAUSTED;
        if (!retriable || n >= maxAttempts || retries.isShutdown()) {
          result.completeExceptionally(translate(status, t, n));
          return;
        }
        if (code != Status.Code.RESOURCE_EXHAUSTED) {
          current.compareAndSet(endpoint, endpoint + 1); // try another node
        }
        retries.schedule(() -> attempt(rpc, n + 1, result), delayMillis(status, n),
            TimeUnit.MILLISECONDS);
      }
    }, MoreExecutors.directExecutor());
  }

  private long delayMillis(Status status, int attempt) {
    Matcher m = RETRY_AFTER.matcher(String.valueOf(status.getDescription()));
    if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED && m.find()) {
      return Long.parseLong(m.group(1));
    }
    long cap = Math.min(maxBackoff.toMillis(), initialBackoff.toMillis() << Math.min(20, attempt - 1));
    return cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1); // jitter
  }

  private ShaleException translate(Status status, Throwable t, int attempts) {
    String where = " (after " + attempts + " attempt" + (attempts == 1 ? "" : "s") + " on "
        + endpoints + ")";
    String d = status.getDescription();
    return switch (status.getCode()) {
      case INVALID_ARGUMENT -> new InvalidRequestException(d, t);
      case DEADLINE_EXCEEDED -> new ShaleTimeoutException("no answer within " + deadline + where
          + "; a write may or may not have been applied", t);
      case RESOURCE_EXHAUSTED -> {
        Matcher m = RETRY_AFTER.matcher(String.valueOf(d));
        yield new WriteThrottledException(d + where,
            Duration.ofMillis(m.find() ? Long.parseLong(m.group(1)) : 100), t);
      }
      default -> new ShaleException(status.getCode() + ": " + d + where, t);
    };
  }

  private static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof ShaleException s) {
        throw s;
      }
      throw e;
    }
  }

  private static ByteString requestId() {
    byte[] id = new byte[16];
    IDS.nextBytes(id);
    return ByteString.copyFrom(id);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    retries.shutdownNow();
    channels.forEach(ManagedChannel::shutdownNow);
  }
}
