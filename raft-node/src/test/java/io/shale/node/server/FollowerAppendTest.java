package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftGroupIdProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.proto.RaftProtos.TermIndexProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The regression test for a fault the nemesis suite found: after a restart, a follower stayed
 * behind for good, answering every heartbeat "entry 456 not found" while the leader kept sending
 * from 457, because the leader believed the follower already held 456.
 *
 * <p>The follower had said so. Ratis 3.3.0's "append-entries compose" (on by default) lets a
 * follower accept a request while an earlier one is still being written; a second request starting
 * at the same index as one in flight is treated as already appended and answered SUCCESS with its
 * own last index, even when it is longer than the one in flight. The leader then never sends the
 * difference. Shale's properties turn the feature off; here a real Ratis follower, with those
 * properties, is sent two overlapping requests back to back (as a leader does after resetting its
 * stream) and must not acknowledge an entry it does not hold.
 */
class FollowerAppendTest {
  @TempDir Path dir;

  private static final RaftGroupId GROUP = RaftGroupId.randomId();

  @Test
  void aFollowerNeverAcknowledgesAnEntryItHasNotAppended() throws Exception {
    RaftProperties p =
        new RaftProperties(
            ShaleNode.properties(NodeConfig.RaftSettings.defaults(), NodeConfig.Limits.defaults()));
    assertThat(RaftServerConfigKeys.Log.appendEntriesComposeEnabled(p)).isFalse();
    assertThat(overAcknowledged(p, 20)).as("acknowledgements beyond the follower's log").isEmpty();
  }

  /**
   * The control: with Shale's properties but the feature on (Ratis's default), the same rounds get
   * an acknowledgement of entries the follower does not hold. If a Ratis upgrade fixes the feature
   * this fails, and Shale may turn it back on.
   */
  @Test
  void withAppendEntriesComposeOnRatisAcknowledgesEntriesItDoesNotHold() throws Exception {
    RaftProperties p =
        new RaftProperties(
            ShaleNode.properties(NodeConfig.RaftSettings.defaults(), NodeConfig.Limits.defaults()));
    RaftServerConfigKeys.Log.setAppendEntriesComposeEnabled(p, true);
    assertThat(overAcknowledged(p, 20))
        .as("acknowledgements beyond the follower's log")
        .isNotEmpty();
  }

  /**
   * Sends {@code rounds} pairs of overlapping requests to a real follower and returns every SUCCESS
   * that acknowledged more than the follower's log then held, described.
   */
  private List<String> overAcknowledged(RaftProperties p, int rounds) throws Exception {
    // A two-member group whose other member (the "leader" this test plays) never runs, so the
    // follower cannot elect itself and takes whatever the test sends.
    RaftPeer leader =
        RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:" + freePort()).build();
    RaftPeer follower =
        RaftPeer.newBuilder().setId("n2").setAddress("127.0.0.1:" + freePort()).build();
    RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
    GrpcConfigKeys.Server.setPort(p, Integer.parseInt(follower.getAddress().split(":")[1]));
    List<String> over = new ArrayList<>();
    try (RaftServer server =
        RaftServer.newBuilder()
            .setServerId(follower.getId())
            .setGroup(RaftGroup.valueOf(GROUP, leader, follower))
            .setProperties(p)
            .setStateMachine(new BaseStateMachine())
            .setOption(RaftStorage.StartupOption.FORMAT)
            .build()) {
      server.start();
      long next = 0;
      for (int round = 0; round < rounds; round++) {
        // Two requests after the same previous entry: a short one and a longer one.
        TermIndex previous = next == 0 ? null : TermIndex.valueOf(1, next - 1);
        CompletableFuture<AppendEntriesReplyProto> shortOne =
            server.appendEntriesAsync(request(leader, follower, previous, next, 1, round));
        CompletableFuture<AppendEntriesReplyProto> longOne =
            server.appendEntriesAsync(request(leader, follower, previous, next, 3, round));
        AppendEntriesReplyProto a = shortOne.get(30, TimeUnit.SECONDS);
        AppendEntriesReplyProto b = longOne.get(30, TimeUnit.SECONDS);
        long held = server.getDivision(GROUP).getRaftLog().getLastEntryTermIndex().getIndex();
        for (AppendEntriesReplyProto r : List.of(a, b)) {
          if (r.getResult() == AppendEntriesReplyProto.AppendResult.SUCCESS
              && r.getMatchIndex() > held) {
            over.add(
                "round "
                    + round
                    + ": acknowledged up to "
                    + r.getMatchIndex()
                    + ", the log holds up to "
                    + held);
          }
        }
        next = held + 1;
      }
    }
    return over;
  }

  private static AppendEntriesRequestProto request(
      RaftPeer leader, RaftPeer follower, TermIndex previous, long first, int count, int round) {
    List<LogEntryProto> entries = new ArrayList<>();
    for (long i = first; i < first + count; i++) {
      entries.add(
          LogEntryProto.newBuilder()
              .setTerm(1)
              .setIndex(i)
              .setStateMachineLogEntry(
                  StateMachineLogEntryProto.newBuilder()
                      .setLogData(ByteString.copyFromUtf8("entry " + i)))
              .build());
    }
    AppendEntriesRequestProto.Builder b =
        AppendEntriesRequestProto.newBuilder()
            .setServerRequest(
                RaftRpcRequestProto.newBuilder()
                    .setRequestorId(leader.getId().toByteString())
                    .setReplyId(follower.getId().toByteString())
                    .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(GROUP.toByteString()))
                    .setCallId(2L * round + count))
            // Nothing is committed: the entries are only logged, never applied.
            .setLeaderTerm(1)
            .setLeaderCommit(-1)
            .addAllEntries(entries);
    if (previous != null) {
      b.setPreviousLog(
          TermIndexProto.newBuilder().setTerm(previous.getTerm()).setIndex(previous.getIndex()));
    }
    return b.build();
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
