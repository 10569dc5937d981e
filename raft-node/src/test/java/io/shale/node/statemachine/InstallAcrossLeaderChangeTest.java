package io.shale.node.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.PutRequest;
import io.shale.engine.EngineOptions;
import io.shale.node.local.LocalCluster;
import io.shale.node.server.NodeConfig;
import io.shale.node.server.ShaleNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotResult;
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
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The regression test for a follower the nemesis left behind for good (5 nodes, 2026-12-01): n4
 * was told by the leader n5 to install a snapshot; during its 16 s fetch n3 was elected, and n3,
 * whose log still held n4's next entry, sent appends that n4 refused for minutes ("snapshot
 * installation is in progress"): Ratis reloads a fetched snapshot only on a leader's next
 * notification, and n3 had no reason to send one.
 *
 * <p>Here a real Ratis follower with Shale's state machine plays n4; the test plays n1 (which
 * asks for the install) and n3 (elected while the fetch is held), and a real node serves the
 * checkpoint through a proxy the test holds until n3 leads. The follower must then take n3's
 * entries.
 */
class InstallAcrossLeaderChangeTest {
  @TempDir
  Path dir;

  private static final RaftGroupId GROUP = RaftGroupId.randomId();

  @Test
  void aFetchWhoseRequesterWasReplacedIsDroppedAndTheNewLeadersEntriesTaken() throws Exception {
    try (LocalCluster source = new LocalCluster(dir.resolve("source"), 1)) {
      int sourceApi = source.node(source.leader()).apiPort();
      writeSome(sourceApi);
      try (HeldProxy proxy = new HeldProxy(sourceApi)) {
        RaftPeer n1 = RaftPeer.newBuilder().setId("n1").setAddress("127.0.0.1:" + freePort())
            .setDataStreamAddress("127.0.0.1:" + proxy.port()).build();
        RaftPeer n2 = RaftPeer.newBuilder().setId("n2").setAddress("127.0.0.1:" + freePort())
            .build();
        RaftPeer n3 = RaftPeer.newBuilder().setId("n3").setAddress("127.0.0.1:" + freePort())
            .build();
        RaftProperties p = new RaftProperties(ShaleNode.properties(
            NodeConfig.RaftSettings.defaults(), NodeConfig.Limits.defaults()));
        RaftServerConfigKeys.setStorageDir(p, List.of(dir.resolve("raft").toFile()));
        GrpcConfigKeys.Server.setPort(p, Integer.parseInt(n2.getAddress().split(":")[1]));
        ShaleStateMachine sm = new ShaleStateMachine(dir.resolve("follower"),
            EngineOptions.defaults(), new SimpleMeterRegistry());
        try (RaftServer server = RaftServer.newBuilder().setServerId(n2.getId())
            .setGroup(RaftGroup.valueOf(GROUP, n1, n2, n3)).setProperties(p)
            .setStateMachine(sm).setOption(RaftStorage.StartupOption.FORMAT).build()) {
          server.start();
          // n1 leads in term 1 and its log starts at 50: the follower fetches from n1's API.
          InstallSnapshotReplyProto asked = server.installSnapshot(notification(n1, n2, 1, 50));
          assertThat(asked.getResult()).isEqualTo(InstallSnapshotResult.IN_PROGRESS);
          // n3 is elected (term 2) while the fetch waits at the proxy; its appends are refused.
          AppendEntriesReplyProto refused = server.appendEntriesAsync(entries(n3, n2, 2, 10))
              .get(30, TimeUnit.SECONDS);
          assertThat(refused.getResult())
              .isEqualTo(AppendEntriesReplyProto.AppendResult.INCONSISTENCY);
          proxy.release();

          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
          AppendEntriesReplyProto last;
          long call = 10;
          do {
            Thread.sleep(100);
            last = server.appendEntriesAsync(entries(n3, n2, 2, ++call))
                .get(30, TimeUnit.SECONDS);
          } while (last.getResult() != AppendEntriesReplyProto.AppendResult.SUCCESS
              && System.nanoTime() < deadline);
          assertThat(last.getResult()).as("n3's append 20 s after the fetch was released: %s",
              last).isEqualTo(AppendEntriesReplyProto.AppendResult.SUCCESS);
          assertThat(server.getDivision(GROUP).getRaftLog().getLastEntryTermIndex().getIndex())
              .isEqualTo(2);
          assertThat(sm.lastInstall()).as("the dropped fetch, reported installed").isNull();
        }
      }
    }
  }

  /** 60 writes, so that the source's checkpoint covers index 49. */
  private static void writeSome(int apiPort) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", apiPort).usePlaintext()
        .build();
    try {
      KVGrpc.KVBlockingStub kv = KVGrpc.newBlockingStub(ch);
      for (int i = 0; i < 60; i++) {
        kv.put(PutRequest.newBuilder()
            .setKey(com.google.protobuf.ByteString.copyFromUtf8("key" + i))
            .setValue(com.google.protobuf.ByteString.copyFromUtf8("value" + i)).build());
      }
    } finally {
      ch.shutdownNow();
    }
  }

  private static RaftRpcRequestProto header(RaftPeer from, RaftPeer to, long callId) {
    return RaftRpcRequestProto.newBuilder().setRequestorId(from.getId().toByteString())
        .setReplyId(to.getId().toByteString())
        .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(GROUP.toByteString()))
        .setCallId(callId).build();
  }

  private static InstallSnapshotRequestProto notification(RaftPeer from, RaftPeer to, long term,
      long firstAvailableIndex) {
    return InstallSnapshotRequestProto.newBuilder().setServerRequest(header(from, to, 1))
        .setLeaderTerm(term)
        .setNotification(InstallSnapshotRequestProto.NotificationProto.newBuilder()
            .setFirstAvailableTermIndex(TermIndexProto.newBuilder().setTerm(term)
                .setIndex(firstAvailableIndex)))
        .build();
  }

  /** Entries 0, 1 and 2 of {@code term}, from the first entry on; nothing committed. */
  private static AppendEntriesRequestProto entries(RaftPeer from, RaftPeer to, long term,
      long callId) {
    List<LogEntryProto> entries = new ArrayList<>();
    for (long i = 0; i < 3; i++) {
      entries.add(LogEntryProto.newBuilder().setTerm(term).setIndex(i)
          .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
              .setLogData(ByteString.copyFromUtf8("entry " + i)))
          .build());
    }
    return AppendEntriesRequestProto.newBuilder().setServerRequest(header(from, to, callId))
        .setLeaderTerm(term).setLeaderCommit(-1).addAllEntries(entries).build();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A TCP forwarder to a local port that holds every connection until released. */
  static final class HeldProxy implements AutoCloseable {
    private final ServerSocket listener =
        new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final CountDownLatch released = new CountDownLatch(1);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    HeldProxy(int target) throws IOException {
      daemon(() -> {
        while (!listener.isClosed()) {
          Socket client = listener.accept();
          sockets.add(client);
          daemon(() -> {
            released.await();
            Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
            sockets.add(upstream);
            daemon(() -> pump(client.getInputStream(), upstream.getOutputStream(), upstream));
            pump(upstream.getInputStream(), client.getOutputStream(), client);
          });
        }
      });
    }

    int port() {
      return listener.getLocalPort();
    }

    void release() {
      released.countDown();
    }

    private static void pump(InputStream in, OutputStream out, Socket to) throws IOException {
      in.transferTo(out);
      to.shutdownOutput();
    }

    private interface Body {
      void run() throws Exception;
    }

    private static void daemon(Body body) {
      Thread t = new Thread(() -> {
        try {
          body.run();
        } catch (Exception closed) {
          // the proxy or a socket closed: nothing more to forward
        }
      }, "held-proxy");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
