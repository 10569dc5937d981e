package io.shale.node.api;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.Member;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.StatusResponse;
import io.shale.node.transport.NodeChannels;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

/** Checks, before Ratis stages a new member, that its addresses are sound and its node answers. */
final class MemberProbe {
  private MemberProbe() {}

  /** What is wrong with {@code address} as HOST:PORT, or null. */
  static String addressProblem(String field, String address) {
    int colon = address.lastIndexOf(':');
    int port = -1;
    try {
      port = colon > 0 ? Integer.parseInt(address.substring(colon + 1)) : -1;
    } catch (NumberFormatException notANumber) {
      // reported below
    }
    return port >= 1 && port <= 65_535
        ? null
        : field + " \"" + address + "\" is not HOST:PORT with a port from 1 to 65535";
  }

  /**
   * Why {@code m} cannot be staged now, or null: its node must answer at its API address as {@code
   * m}'s id, and something must accept connections at its Raft address. Checked because Ratis
   * checks a staged member's progress only when the leader's event queue is idle or the member
   * acknowledges an append: under a steady write load a member that never answers stays staged for
   * good, and every other membership change is refused meanwhile (without writes it fails after 6
   * s). This catches a node not started and an address where nothing listens; not a Raft address
   * where another service listens, nor a node that fails later. The check runs on the node asked,
   * not on the leader, which is the one that connects.
   */
  static String problem(Member m) {
    ManagedChannel ch = null;
    try {
      ch = NodeChannels.open(m.getApiAddress());
      StatusResponse r =
          ClusterGrpc.newBlockingStub(ch)
              .withDeadlineAfter(2, TimeUnit.SECONDS)
              .status(StatusRequest.newBuilder().setLocalOnly(true).build());
      String id = r.getNodesCount() == 0 ? "" : r.getNodes(0).getMember().getId();
      if (!id.equals(m.getId())) {
        return "the node answering at " + m.getApiAddress() + " is " + id + ", not " + m.getId();
      }
    } catch (StatusRuntimeException e) {
      return "its node did not answer Status at its API address "
          + m.getApiAddress()
          + " (is it "
          + "running, started with --join?): "
          + e.getStatus();
    } catch (RuntimeException e) {
      return "its API address " + m.getApiAddress() + " cannot be reached: " + e;
    } finally {
      if (ch != null) {
        ch.shutdownNow();
      }
    }
    int colon = m.getRaftAddress().lastIndexOf(':');
    String host = m.getRaftAddress().substring(0, colon);
    try (Socket raftPort = new Socket()) {
      raftPort.connect(
          new InetSocketAddress(
              host.startsWith("[") ? host.substring(1, host.length() - 1) : host,
              Integer.parseInt(m.getRaftAddress().substring(colon + 1))),
          2_000);
    } catch (IOException | RuntimeException e) {
      return "its Raft address " + m.getRaftAddress() + " does not accept connections: " + e;
    }
    return null;
  }
}
