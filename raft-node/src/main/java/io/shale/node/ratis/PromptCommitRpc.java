package io.shale.node.ratis;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;

/**
 * Ratis's gRPC transport with {@link PromptCommitAppender} as the leader's log sender. Set as the
 * RPC type ({@code raft.rpc.type}, which takes a class name); clients and servers use it alike, and
 * everything but the sender is Ratis's own {@link GrpcFactory}.
 */
public final class PromptCommitRpc implements RpcType {
  /** Ratis instantiates the type by its class name. */
  public PromptCommitRpc() {}

  @Override
  public String name() {
    return PromptCommitRpc.class.getName();
  }

  @Override
  public GrpcFactory newFactory(Parameters parameters) {
    return new Factory(parameters);
  }

  private static final class Factory extends GrpcFactory {
    Factory(Parameters parameters) {
      super(parameters);
    }

    @Override
    public LogAppender newLogAppender(
        RaftServer.Division server, LeaderState state, FollowerInfo follower) {
      return new PromptCommitAppender(server, state, follower);
    }
  }
}
