package io.shale.node.transport;

import java.util.EnumSet;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;

/**
 * What one message and one connection may bring to the Raft port. Ratis gives its server and its
 * clients one message-size setting, which a node keeps large for the replies its clients receive (a
 * transaction's results reach 32 MiB); the server accepts no message larger than the largest append
 * or forwarded write ({@code maxInboundBytes}), refused before its bytes are buffered, and at most
 * {@link #MAX_CALLS_PER_CONNECTION} calls at once on one connection (a peer uses a handful:
 * appends, heartbeats, its client's streams).
 */
public final class RaftPortLimits implements GrpcServices.Customizer {
  /** Calls one connection may have open at once on the Raft port. */
  static final int MAX_CALLS_PER_CONNECTION = 64;

  private final int maxInboundBytes;
  private final GrpcServices.Customizer next;

  /**
   * @param maxInboundBytes the largest message the Raft port takes
   * @param next the customizer applied after this one
   */
  public RaftPortLimits(int maxInboundBytes, GrpcServices.Customizer next) {
    this.maxInboundBytes = maxInboundBytes;
    this.next = next;
  }

  @Override
  public NettyServerBuilder customize(
      NettyServerBuilder builder, EnumSet<GrpcServices.Type> types) {
    NettyServerBuilder b =
        types.contains(GrpcServices.Type.SERVER)
            ? builder
                .maxInboundMessageSize(maxInboundBytes)
                .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
            : builder;
    return next.customize(b, types);
  }
}
