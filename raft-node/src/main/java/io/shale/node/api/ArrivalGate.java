package io.shale.node.api;

import io.grpc.ForwardingServerCallListener;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.StatusException;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.Supplier;

/**
 * Counts a request against the node's in-flight limit from the moment its message has arrived,
 * before it is parsed. gRPC parses an arriving message into heap objects before any handler runs,
 * and a unary call's handler runs only at half-close: without this, every API thread could parse a
 * message of up to {@code limits.max_message_size} at once, and a client that sends messages and
 * never half-closes could leave any number of parsed requests on the heap, outside every budget.
 *
 * <p>Invariant: a call whose single request has arrived holds a permit of the message's size until
 * its handler starts (the handler then takes its own, {@link CallRunner}) or the call ends; a
 * streaming call holds one per message larger than {@link #SMALL_STREAM_MESSAGE} while that message
 * is handled. A message that does not fit is refused, unparsed, with the same RESOURCE_EXHAUSTED
 * and retry-after as any overload.
 */
final class ArrivalGate implements ServerInterceptor {
  /** Hands a message on as the bytes that arrived, so that the gate sees it before its parse. */
  private static final MethodDescriptor.Marshaller<InputStream> AS_ARRIVED =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(InputStream value) {
          return value;
        }

        @Override
        public InputStream parse(InputStream stream) {
          return stream;
        }
      };

  /**
   * A message of a streaming call this small passes without a permit: a watch request or a lease
   * keep-alive is handled as it arrives and never held, and refusing one while writes fill the node
   * would end a watch or let a lease lapse. Such messages cost at most this much per API thread,
   * only while each is parsed.
   */
  static final int SMALL_STREAM_MESSAGE = 64 << 10;

  private final InflightLimit inflight;
  private final Supplier<StatusException> overloaded;
  private final long unknownLength;
  private final Counter refusals;

  /**
   * @param inflight the node's in-flight limit, shared with the handlers
   * @param overloaded the refusal, as the handlers give it
   * @param unknownLength what a message whose size is unknown until parsed (a compressed one) is
   *     counted as: the largest message the port accepts
   * @param refusals counts the messages refused here (the node's call meters and audit trail sit
   *     inside the gate, where messages are parsed, and do not see them)
   */
  ArrivalGate(
      InflightLimit inflight,
      Supplier<StatusException> overloaded,
      long unknownLength,
      Counter refusals) {
    this.inflight = inflight;
    this.overloaded = overloaded;
    this.unknownLength = unknownLength;
    this.refusals = refusals;
  }

  /** {@code service}, with each arriving message admitted by this gate before it is parsed. */
  ServerServiceDefinition guard(ServerServiceDefinition service) {
    return ServerInterceptors.intercept(
        ServerInterceptors.useMarshalledMessages(service, AS_ARRIVED), this);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return new Arrivals<>(
        call,
        next.startCall(call, headers),
        call.getMethodDescriptor().getType().clientSendsOneMessage());
  }

  private long size(Object message) {
    if (message instanceof KnownLength && message instanceof InputStream in) {
      try {
        return in.available();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return unknownLength;
  }

  /** One call's messages, admitted as they arrive. Calls on a listener are serialized by gRPC. */
  private final class Arrivals<Q, R>
      extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
    private final ServerCall<Q, R> call;
    private final boolean oneRequest;
    private InflightLimit.Permit held;
    private boolean refused;

    Arrivals(ServerCall<Q, R> call, ServerCall.Listener<Q> next, boolean oneRequest) {
      super(next);
      this.call = call;
      this.oneRequest = oneRequest;
    }

    @Override
    public void onMessage(Q message) {
      if (refused) {
        return;
      }
      long size = size(message);
      if (!oneRequest && size <= SMALL_STREAM_MESSAGE) {
        super.onMessage(message); // handled inline, never held: see SMALL_STREAM_MESSAGE
        return;
      }
      InflightLimit.Permit permit = inflight.tryAcquire(size);
      if (permit == null) {
        refused = true;
        refusals.increment();
        StatusException no = overloaded.get();
        call.close(no.getStatus(), no.getTrailers());
        return;
      }
      release();
      held = permit;
      try {
        super.onMessage(message);
      } finally {
        if (!oneRequest) {
          release();
        }
      }
    }

    @Override
    public void onHalfClose() {
      if (refused) {
        return;
      }
      release();
      super.onHalfClose();
    }

    @Override
    public void onReady() {
      if (!refused) {
        super.onReady();
      }
    }

    @Override
    public void onCancel() {
      release();
      super.onCancel();
    }

    @Override
    public void onComplete() {
      release();
      super.onComplete();
    }

    private void release() {
      if (held != null) {
        held.close();
        held = null;
      }
    }
  }
}
