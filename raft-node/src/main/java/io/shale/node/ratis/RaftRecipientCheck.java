package io.shale.node.ratis;

import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;

/**
 * Makes a node refuse Raft messages addressed to another node, and makes peers re-resolve its name
 * now and then. Installed on the Raft port through Ratis's services customizer.
 *
 * <p>Why: peers are named (n2:7100) and names resolve to addresses that change when a node
 * restarts, as containers and pods do. A peer's channel that kept the old address while the name
 * did not resolve (the node was down) may later reach whichever node got that address since. Ratis
 * does not check who answers, so a leader then took one node's acknowledgements for another's: a
 * follower stayed behind forever (the leader believed it had entries it never received), and in a
 * 5-node cluster one node's vote could count twice towards a commit (RaftRecipientCheckTest;
 * docs/postmortems/01). etcd guards the same way: each message names its recipient, and a member
 * refuses messages for another.
 *
 * <p>The refusal alone would leave the misdirected channel connected; a maximum connection age
 * sends every client a GOAWAY after {@link #MAX_CONNECTION_AGE_SECONDS}, so its next call opens a
 * new connection and resolves the name again. Calls in progress are not cut (no grace limit), so a
 * healthy replication stream is not interrupted.
 */
public final class RaftRecipientCheck implements GrpcServices.Customizer, ServerInterceptor {
  /** How long a peer may keep one connection before it must reconnect and re-resolve. */
  static final long MAX_CONNECTION_AGE_SECONDS = 20;

  private final String self;

  public RaftRecipientCheck(String self) {
    this.self = self;
  }

  @Override
  public NettyServerBuilder customize(
      NettyServerBuilder builder, EnumSet<GrpcServices.Type> types) {
    if (!types.contains(GrpcServices.Type.SERVER)) {
      return builder;
    }
    return builder.intercept(this).maxConnectionAge(MAX_CONNECTION_AGE_SECONDS, TimeUnit.SECONDS);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    ServerCall.Listener<Q> delegate = next.startCall(call, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        if (refused) {
          return;
        }
        String recipient = recipient(message);
        if (recipient != null && !recipient.equals(self)) {
          refused = true;
          call.close(
              Status.FAILED_PRECONDITION.withDescription(
                  "Raft message for "
                      + recipient
                      + " reached "
                      + self
                      + " (a stale address for "
                      + recipient
                      + "?)"),
              new Metadata());
          return;
        }
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }
    };
  }

  /** The node a Raft server message is addressed to, or null for any other message. */
  static String recipient(Object message) {
    RaftRpcRequestProto r;
    if (message instanceof AppendEntriesRequestProto m) {
      r = m.getServerRequest();
    } else if (message instanceof RequestVoteRequestProto m) {
      r = m.getServerRequest();
    } else if (message instanceof InstallSnapshotRequestProto m) {
      r = m.getServerRequest();
    } else if (message instanceof ReadIndexRequestProto m) {
      r = m.getServerRequest();
    } else if (message instanceof StartLeaderElectionRequestProto m) {
      r = m.getServerRequest();
    } else {
      return null;
    }
    return r.getReplyId().isEmpty() ? null : r.getReplyId().toStringUtf8();
  }
}
