package io.shale.node.ratis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.util.TimeDuration;

/**
 * Ratis's gRPC transport with {@link PromptCommitAppender} as the leader's log sender. Set as the
 * RPC type ({@code raft.rpc.type}, which takes a class name); clients and servers use it alike, and
 * everything but the sender is Ratis's own {@link GrpcFactory}.
 */
public final class PromptCommitRpc implements RpcType {
  /** The Ratis property that carries {@code raft.commit_update_delay} to each sender. */
  static final String DELAY_KEY = "shale.commit-update.delay";

  /** Ratis instantiates the type by its class name. */
  public PromptCommitRpc() {}

  /** Sets the RPC type and the senders' commit update delay in {@code p}. */
  public static void install(RaftProperties p, Duration commitUpdateDelay) {
    org.apache.ratis.RaftConfigKeys.Rpc.setType(p, new PromptCommitRpc());
    p.setTimeDuration(
        DELAY_KEY, TimeDuration.valueOf(commitUpdateDelay.toNanos(), TimeUnit.NANOSECONDS));
  }

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
      TimeDuration delay =
          server
              .getRaftServer()
              .getProperties()
              .getTimeDuration(DELAY_KEY, TimeDuration.ZERO, TimeUnit.NANOSECONDS);
      return new PromptCommitAppender(
          server, state, follower, Duration.ofNanos(delay.toLong(TimeUnit.NANOSECONDS)));
    }
  }
}
