package io.shale.node.transport;

import io.grpc.BindableService;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.thirdparty.io.grpc.HandlerRegistry;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;

/**
 * The gRPC services only other nodes may call (snapshot transfer, a node's own status, work
 * forwarded by the node a client asked), served on the Raft port next to Ratis's services.
 *
 * <p>Why there: the Raft port is the peer listener. With {@code [tls]} it completes a handshake
 * only with a certificate from the cluster's CA carrying the peer CN ({@link PeerTls}), so these
 * services need no check of their own and are never reachable on the client API port. They are
 * bound after the Raft server is built (they need its division); a call before that is answered
 * UNIMPLEMENTED, as for an unknown method.
 *
 * <p>Installed through Ratis's services customizer, as a fallback handler registry of its server:
 * the services are Shale's own (generated against {@code io.grpc}), carried across to Ratis's
 * shaded gRPC by {@link BridgedServerCall}.
 */
public final class PeerServices extends HandlerRegistry implements GrpcServices.Customizer {
  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private final GrpcServices.Customizer next;
  private final Map<String, org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition<?, ?>>
      methods = new ConcurrentHashMap<>();

  /**
   * @param next the customizer applied after this one (the node's recipient check)
   */
  public PeerServices(GrpcServices.Customizer next) {
    this.next = next;
  }

  /** Serves {@code service}'s methods on the Raft port from now on. */
  public void bind(BindableService service) {
    ServerServiceDefinition definition = service.bindService();
    for (ServerMethodDefinition<?, ?> m : definition.getMethods()) {
      methods.put(m.getMethodDescriptor().getFullMethodName(), bridge(m));
    }
  }

  @Override
  public NettyServerBuilder customize(
      NettyServerBuilder builder, EnumSet<GrpcServices.Type> types) {
    NettyServerBuilder b =
        types.contains(GrpcServices.Type.SERVER) ? builder.fallbackHandlerRegistry(this) : builder;
    return next.customize(b, types);
  }

  @Override
  public org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition<?, ?> lookupMethod(
      String methodName, String authority) {
    return methods.get(methodName);
  }

  private static <Q, R>
      org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition<byte[], byte[]> bridge(
          ServerMethodDefinition<Q, R> definition) {
    io.grpc.MethodDescriptor<Q, R> method = definition.getMethodDescriptor();
    io.grpc.ServerCallHandler<Q, R> handler = definition.getServerCallHandler();
    MethodDescriptor<byte[], byte[]> shaded =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.valueOf(method.getType().name()))
            .setFullMethodName(method.getFullMethodName())
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();
    ServerCallHandler<byte[], byte[]> bridged =
        (call, headers) -> listen(new BridgedServerCall<>(call, method), handler);
    return org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition.create(shaded, bridged);
  }

  private static <Q, R> ServerCall.Listener<byte[]> listen(
      BridgedServerCall<Q, R> call, io.grpc.ServerCallHandler<Q, R> handler) {
    io.grpc.ServerCall.Listener<Q> inner = handler.startCall(call, new io.grpc.Metadata());
    return new ServerCall.Listener<>() {
      @Override
      public void onMessage(byte[] message) {
        inner.onMessage(call.parseRequest(message));
      }

      @Override
      public void onHalfClose() {
        inner.onHalfClose();
      }

      @Override
      public void onCancel() {
        inner.onCancel();
      }

      @Override
      public void onComplete() {
        inner.onComplete();
      }

      @Override
      public void onReady() {
        inner.onReady();
      }
    };
  }
}
