package io.shale.node.watch;

import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.Event;
import io.shale.client.proto.ResponseHeader;
import io.shale.client.proto.WatchGrpc;
import io.shale.client.proto.WatchRequest;
import io.shale.client.proto.WatchResponse;
import io.shale.node.statemachine.AppliedChanges;
import io.shale.node.statemachine.CommandCodec;
import io.shale.node.statemachine.KeyChange;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The Watch API of one node: each stream reads this node's {@link ChangeHistory} from its next
 * index while the client takes responses (gRPC flow control), so a slow client holds no copy of
 * anything: when the history drops changes it was not sent yet, it is cancelled by name. Streams
 * are woken when an entry is applied, when the client can take more, and by their progress timer.
 */
public final class WatchService extends WatchGrpc.WatchImplBase
    implements AppliedChanges, AutoCloseable {
  /** Keys and values per response, beyond which a response ends at an index boundary. */
  static final long RESPONSE_BYTES = 1 << 20;

  private final ChangeHistory history;
  private final Supplier<String> nodeId;
  private final LongSupplier term;
  private final Duration defaultProgress;
  private final ExecutorService senders;
  private final ScheduledExecutorService timer;
  private final Set<Stream> streams = ConcurrentHashMap.newKeySet();

  /**
   * @param historyBytes the heap the recent changes kept may take ({@code watch.history_size})
   * @param defaultProgress a quiet stream gets a header-only response this often ({@code
   *     watch.progress_interval})
   */
  public WatchService(
      long historyBytes, Supplier<String> nodeId, LongSupplier term, Duration defaultProgress) {
    this(historyBytes, nodeId, term, defaultProgress, false);
  }

  /**
   * @param previousValues whether changes carry the keys' previous values ({@code
   *     watch.prev_values}), so that watches may ask for them
   */
  public WatchService(
      long historyBytes,
      Supplier<String> nodeId,
      LongSupplier term,
      Duration defaultProgress,
      boolean previousValues) {
    this.previousValues = previousValues;
    this.history = new ChangeHistory(historyBytes);
    this.nodeId = nodeId;
    this.term = term;
    this.defaultProgress = defaultProgress;
    this.senders =
        Executors.newFixedThreadPool(
            2, io.shale.engine.concurrent.DaemonThreads.numbered("watch-sender"));
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            io.shale.engine.concurrent.DaemonThreads.numbered("watch-timer"));
  }

  private final boolean previousValues;

  @Override
  public boolean previousValues() {
    return previousValues;
  }

  /** Streams open now. */
  public int streams() {
    return streams.size();
  }

  @Override
  public void restartAfter(long index) {
    history.restartAfter(index);
    wakeAll();
  }

  @Override
  public void applied(long index, List<KeyChange> changes) {
    history.applied(index, changes);
    wakeAll();
  }

  private void wakeAll() {
    for (Stream s : streams) {
      s.wake();
    }
  }

  @Override
  public void watch(WatchRequest req, StreamObserver<WatchResponse> out) {
    ServerCallStreamObserver<WatchResponse> call = (ServerCallStreamObserver<WatchResponse>) out;
    KeyFilter filter;
    try {
      filter = filter(req);
    } catch (IllegalArgumentException bad) {
      call.onError(Status.INVALID_ARGUMENT.withDescription(bad.getMessage()).asException());
      return;
    }
    if (req.getPrevValues() && !previousValues) {
      call.onError(
          Status.FAILED_PRECONDITION
              .withDescription(
                  "node "
                      + nodeId.get()
                      + " keeps no previous values (watch.prev_values = false): watch without"
                      + " them, or start every node with watch.prev_values = true")
              .asException());
      return;
    }
    // Index 0 is never a change (Ratis's first entry is the configuration): "now" starts at 1 or
    // later, so a client can tell a created watch (resume index >= 1) from one not yet created.
    long start =
        req.getStartIndex() == 0 ? Math.max(1, history.appliedIndex() + 1) : req.getStartIndex();
    long oldest = history.oldestIndex();
    if (start < oldest) {
      call.onError(compacted(start, oldest));
      return;
    }
    Duration progress =
        req.getProgressIntervalMs() == 0
            ? defaultProgress
            : Duration.ofMillis(Math.max(100, req.getProgressIntervalMs()));
    Stream s = new Stream(call, filter, start, req.getPrevValues());
    // First, where the stream starts: a client that loses it before any change resumes there.
    s.created(start);
    streams.add(s);
    call.setOnCancelHandler(s::end);
    call.setOnReadyHandler(s::wake);
    s.progressTimer =
        timer.scheduleWithFixedDelay(
            s::progressTick, progress.toMillis(), progress.toMillis(), TimeUnit.MILLISECONDS);
    s.wake();
  }

  static KeyFilter filter(WatchRequest req) {
    byte[] key = req.getKey().toByteArray();
    return switch (req.getKind()) {
      case KEY -> KeyFilter.key(CommandCodec.checkKey(key));
      case PREFIX -> {
        if (key.length == 0) {
          throw new IllegalArgumentException("a prefix watch needs a prefix");
        }
        yield KeyFilter.prefix(CommandCodec.checkKey(key));
      }
      case RANGE -> {
        byte[] end = req.getRangeEnd().isEmpty() ? null : req.getRangeEnd().toByteArray();
        if (end != null && Arrays.compareUnsigned(key, end) >= 0) {
          throw new IllegalArgumentException("malformed range: end must be after start");
        }
        yield new KeyFilter(key, end);
      }
      case UNRECOGNIZED -> throw new IllegalArgumentException("unknown watch kind");
    };
  }

  private static io.grpc.StatusException compacted(long start, long oldest) {
    Metadata t = new Metadata();
    t.put(ErrorTrailers.ERROR, ErrorTrailers.COMPACTED);
    t.put(ErrorTrailers.COMPACT_INDEX, Long.toString(oldest));
    return Status.OUT_OF_RANGE
        .withDescription(
            "watch from index "
                + start
                + " cannot be served: this node's change history starts at "
                + oldest
                + " (watch.history_size); start at "
                + oldest
                + " or later, or read the current state and watch from after it")
        .asException(t);
  }

  private WatchResponse response(ChangeHistory.Read r, boolean withPrevious) {
    WatchResponse.Builder b =
        WatchResponse.newBuilder()
            .setHeader(
                ResponseHeader.newBuilder()
                    .setNodeId(nodeId.get())
                    .setTerm(term.getAsLong())
                    .setAppliedIndex(r.throughIndex()));
    for (ChangeHistory.Event e : r.events()) {
      KeyChange c = e.change();
      Event.Builder ev =
          Event.newBuilder().setKey(ByteString.copyFrom(c.key())).setModIndex(e.index());
      if (c.isDelete()) {
        ev.setType(Event.Type.DELETE);
      } else {
        ev.setType(Event.Type.PUT)
            .setValue(ByteString.copyFrom(c.value()))
            .setCreateIndex(c.createIndex())
            .setVersion(c.version());
      }
      if (withPrevious && c.previous() != null) {
        KeyChange.Previous p = c.previous();
        ev.setHasPrev(true)
            .setPrevValue(ByteString.copyFrom(p.value()))
            .setPrevModIndex(p.modIndex())
            .setPrevCreateIndex(p.createIndex())
            .setPrevVersion(p.version());
      }
      b.addEvents(ev);
    }
    return b.build();
  }

  /** One client's watch: its filter and the next index to send, drained by one sender at a time. */
  private final class Stream {
    private final ServerCallStreamObserver<WatchResponse> call;
    private final KeyFilter filter;
    private final AtomicInteger wanted = new AtomicInteger();
    private volatile boolean ended;
    private volatile boolean progressDue;
    private long next;
    ScheduledFuture<?> progressTimer;

    private final boolean withPrevious;

    Stream(
        ServerCallStreamObserver<WatchResponse> call,
        KeyFilter filter,
        long next,
        boolean withPrevious) {
      this.call = call;
      this.filter = filter;
      this.next = next;
      this.withPrevious = withPrevious;
    }

    void wake() {
      if (!ended && wanted.getAndIncrement() == 0) {
        try {
          senders.execute(this::drain);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
          end();
        }
      }
    }

    synchronized void created(long start) {
      call.onNext(response(new ChangeHistory.Read(List.of(), start - 1), false));
    }

    void progressTick() {
      progressDue = true;
      wake();
    }

    /** Sends what the history holds for this stream while the client takes it. */
    private void drain() {
      int missed = 1;
      do {
        try {
          send();
        } catch (RuntimeException e) {
          fail(Status.INTERNAL.withDescription("watch stream failed: " + e).asException());
        }
        missed = wanted.addAndGet(-missed);
      } while (missed != 0);
    }

    private synchronized void send() {
      while (!ended) {
        ChangeHistory.Read r = history.read(next, filter, RESPONSE_BYTES);
        if (r == null) {
          Metadata t = new Metadata();
          t.put(ErrorTrailers.ERROR, ErrorTrailers.WATCHER_TOO_SLOW);
          t.put(ErrorTrailers.COMPACT_INDEX, Long.toString(history.oldestIndex()));
          fail(
              Status.RESOURCE_EXHAUSTED
                  .withDescription(
                      "watcher fell behind: the changes from index "
                          + next
                          + " left this node's change history (watch.history_size) before it"
                          + " read them; watch again from a newer index")
                  .asException(t));
          return;
        }
        if (!call.isReady()) {
          return; // woken again when the client can take more
        }
        boolean quietTooLong = progressDue;
        progressDue = false;
        if (r.events().isEmpty() && !quietTooLong) {
          next = Math.max(next, r.throughIndex() + 1);
          return;
        }
        if (r.throughIndex() < next && r.events().isEmpty()) {
          // Nothing applied since: a progress response repeats where the stream stands.
          call.onNext(response(new ChangeHistory.Read(r.events(), next - 1), withPrevious));
          return;
        }
        call.onNext(response(r, withPrevious));
        next = r.throughIndex() + 1;
        if (r.events().isEmpty()) {
          return;
        }
      }
    }

    private synchronized void fail(io.grpc.StatusException e) {
      if (!ended) {
        end();
        try {
          call.onError(e);
        } catch (IllegalStateException alreadyClosed) {
          // the client went away meanwhile
        }
      }
    }

    void end() {
      ended = true;
      streams.remove(this);
      if (progressTimer != null) {
        progressTimer.cancel(false);
      }
    }
  }

  /** Ends every stream (the node is stopping): clients resume on another node. */
  @Override
  public void close() {
    for (Stream s : streams) {
      s.fail(
          Status.UNAVAILABLE
              .withDescription("node " + nodeId.get() + " is stopping; resume on another node")
              .asException());
    }
    timer.shutdownNow();
    senders.shutdown();
  }
}
