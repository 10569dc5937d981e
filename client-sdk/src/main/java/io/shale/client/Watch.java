package io.shale.client;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.Event;
import io.shale.client.proto.WatchGrpc;
import io.shale.client.proto.WatchRequest;
import io.shale.client.proto.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running watch ({@link ShaleClient#watch}): one stream to one node at a time. When the stream
 * fails (the node stops, the network breaks) it resumes on the next healthy endpoint from the index
 * after the last one delivered, after a backoff of 100 ms doubling to 2 s, so no change is lost or
 * delivered twice. It ends for good on a refusal ({@link WatchListener#onError}) or {@link #close}.
 */
public final class Watch implements AutoCloseable {
  private static final long MIN_BACKOFF_MS = 100;
  private static final long MAX_BACKOFF_MS = 2_000;

  private final RetryingCall.Settings settings;
  private final WatchOptions options;
  private final WatchListener listener;

  /** The first index not yet delivered; 0 until the first node said where "now" is. */
  private volatile long next;

  private volatile boolean closed;
  private volatile Context.CancellableContext current;
  private long backoffMs = MIN_BACKOFF_MS;

  /** Nodes in a row that no longer held the resume index: another one may still. */
  private int compactedInARow;

  private int endpoint = -1;

  Watch(RetryingCall.Settings settings, WatchOptions options, WatchListener listener) {
    this.settings = settings;
    this.options = options;
    this.listener = listener;
    this.next = options.startIndex;
  }

  /** The endpoint (HOST:PORT) whose node serves this watch now, or tried last. */
  public synchronized String endpoint() {
    return endpoint < 0 ? null : settings.endpoints().address(endpoint);
  }

  /** The index this watch would resume from: the one after the last it delivered. */
  public long resumeIndex() {
    return next;
  }

  synchronized void open() {
    if (closed) {
      return;
    }
    endpoint = settings.endpoints().nextHealthy();
    WatchRequest.Builder req =
        WatchRequest.newBuilder()
            .setKey(ByteString.copyFrom(options.key))
            .setKind(WatchRequest.Kind.valueOf(options.kind.name()))
            .setStartIndex(next)
            .setProgressIntervalMs(
                (int) Math.min(Integer.MAX_VALUE, options.progressInterval.toMillis()))
            .setPrevValues(options.previousValues);
    if (options.end != null) {
      req.setRangeEnd(ByteString.copyFrom(options.end));
    }
    Context.CancellableContext ctx = Context.current().withCancellation();
    current = ctx;
    int at = endpoint;
    ctx.run(
        () ->
            WatchGrpc.newStub(settings.endpoints().channel(at))
                .watch(req.build(), new Receiver(ctx, at)));
  }

  private final class Receiver implements StreamObserver<WatchResponse> {
    private final Context.CancellableContext ctx;
    private final int at;

    Receiver(Context.CancellableContext ctx, int at) {
      this.ctx = ctx;
      this.at = at;
    }

    @Override
    public void onNext(WatchResponse r) {
      if (closed || ctx.isCancelled()) {
        return;
      }
      backoffMs = MIN_BACKOFF_MS;
      compactedInARow = 0;
      long through = r.getHeader().getAppliedIndex();
      List<WatchEvent> events = new ArrayList<>(r.getEventsCount());
      for (Event e : r.getEventsList()) {
        if (e.getModIndex() < next) {
          continue; // never twice (a node may repeat what another sent)
        }
        byte[] key = e.getKey().toByteArray();
        events.add(
            new WatchEvent(
                e.getType() == Event.Type.DELETE ? WatchEvent.Type.DELETE : WatchEvent.Type.PUT,
                new Entry(
                    key,
                    e.getValue().toByteArray(),
                    e.getModIndex(),
                    e.getCreateIndex(),
                    e.getVersion()),
                e.getHasPrev()
                    ? new Entry(
                        key,
                        e.getPrevValue().toByteArray(),
                        e.getPrevModIndex(),
                        e.getPrevCreateIndex(),
                        e.getPrevVersion())
                    : null));
      }
      if (through + 1 < next && events.isEmpty()) {
        return; // a node behind the one before: nothing new
      }
      next = Math.max(next, through + 1);
      listener.onEvents(events, through);
    }

    @Override
    public void onError(Throwable t) {
      if (closed || ctx.isCancelled() && current != ctx) {
        return;
      }
      Status s = Status.fromThrowable(t);
      Metadata trailers = Status.trailersFromThrowable(t);
      String error = trailers == null ? null : trailers.get(ErrorTrailers.ERROR);
      switch (s.getCode()) {
        case OUT_OF_RANGE, RESOURCE_EXHAUSTED -> {
          if (++compactedInARow < settings.endpoints().addresses().size()) {
            // A node that restarted, or installed a snapshot, holds less history than others.
            resumeLater();
            return;
          }
          String oldest = trailers == null ? null : trailers.get(ErrorTrailers.COMPACT_INDEX);
          end(
              new CompactedException(
                  s.getDescription() + " (" + error + ")",
                  oldest == null ? 0 : Long.parseLong(oldest),
                  t));
        }
        case INVALID_ARGUMENT, FAILED_PRECONDITION ->
            end(new InvalidRequestException(s.getDescription(), t));
        case PERMISSION_DENIED, UNAUTHENTICATED ->
            end(new ShaleException(s.getCode() + ": " + s.getDescription(), t));
        default -> resumeLater();
      }
    }

    private void resumeLater() {
      settings.endpoints().failed(at);
      long wait = backoffMs;
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      settings.timer().schedule(Watch.this::open, wait, TimeUnit.MILLISECONDS);
    }

    @Override
    public void onCompleted() {
      if (!closed) {
        resumeLater(); // a node ends a stream only when it stops
      }
    }
  }

  private void end(ShaleException e) {
    closed = true;
    listener.onError(e);
  }

  @Override
  public void close() {
    closed = true;
    Context.CancellableContext c = current;
    if (c != null) {
      c.cancel(null);
    }
  }
}
