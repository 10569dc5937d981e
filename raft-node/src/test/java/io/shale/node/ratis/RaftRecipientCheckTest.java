package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The regression test for a fault the nemesis suite found: a Raft message that reaches a node other
 * than the one it names (a peer's channel kept an address that now belongs to another node) must be
 * refused, not answered as if by the named node.
 */
class RaftRecipientCheckTest {
  @TempDir Path dir;

  private static RaftRpcRequestProto header(String from, String to, ByteString group) {
    return RaftRpcRequestProto.newBuilder()
        .setRequestorId(ByteString.copyFromUtf8(from))
        .setReplyId(ByteString.copyFromUtf8(to))
        .setRaftGroupId(
            org.apache.ratis.proto.RaftProtos.RaftGroupIdProto.newBuilder().setId(group))
        .setCallId(1)
        .build();
  }

  @Test
  void aVoteRequestForAnotherNodeIsRefusedAndOneForThisNodeIsAnswered() throws Exception {
    try (LocalCluster cluster = new LocalCluster(dir, 3)) {
      cluster.leader();
      NodeConfig.Peer n1 = cluster.peer("n1");
      ByteString group = cluster.group().getGroupId().toByteString();
      ManagedChannel ch = NettyChannelBuilder.forTarget(n1.raftAddress()).usePlaintext().build();
      try {
        var stub =
            RaftServerProtocolServiceGrpc.newBlockingStub(ch)
                .withDeadlineAfter(10, TimeUnit.SECONDS);
        // Term 0 is below the cluster's: a vote refused, but answered by n1 itself.
        RequestVoteReplyProto answered =
            stub.requestVote(
                RequestVoteRequestProto.newBuilder()
                    .setServerRequest(header("n2", "n1", group))
                    .setCandidateTerm(0)
                    .build());
        assertThat(answered.getServerReply().getReplyId().toStringUtf8()).isEqualTo("n1");
        assertThat(answered.getServerReply().getSuccess()).isFalse();

        assertThatThrownBy(
                () ->
                    stub.requestVote(
                        RequestVoteRequestProto.newBuilder()
                            .setServerRequest(header("n2", "n3", group))
                            .setCandidateTerm(0)
                            .build()))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> {
                  assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                  assertThat(e.getStatus().getDescription()).contains("for n3 reached n1");
                });
      } finally {
        ch.shutdownNow();
      }
    }
  }

  @Test
  void everyServerMessageNamesItsRecipient() {
    ByteString g = ByteString.copyFromUtf8("g");
    RaftRpcRequestProto h = header("n1", "n2", g);
    assertThat(
            RaftRecipientCheck.recipient(
                AppendEntriesRequestProto.newBuilder().setServerRequest(h).build()))
        .isEqualTo("n2");
    assertThat(
            RaftRecipientCheck.recipient(
                RequestVoteRequestProto.newBuilder().setServerRequest(h).build()))
        .isEqualTo("n2");
    assertThat(
            RaftRecipientCheck.recipient(
                InstallSnapshotRequestProto.newBuilder().setServerRequest(h).build()))
        .isEqualTo("n2");
    assertThat(
            RaftRecipientCheck.recipient(
                ReadIndexRequestProto.newBuilder().setServerRequest(h).build()))
        .isEqualTo("n2");
    assertThat(
            RaftRecipientCheck.recipient(
                StartLeaderElectionRequestProto.newBuilder().setServerRequest(h).build()))
        .isEqualTo("n2");
    // Not a server message, or no recipient named: let through.
    assertThat(RaftRecipientCheck.recipient("x")).isNull();
    assertThat(RaftRecipientCheck.recipient(AppendEntriesRequestProto.getDefaultInstance()))
        .isNull();
  }
}
