package io.shale.node.api;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.Member;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.StatusResponse;
import io.shale.node.transport.PeerChannels;
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
   * Why {@code m} cannot be staged now, or null: its node must answer at its Raft address, as a
   * node of this cluster (with {@code [tls]}, the handshake needs a certificate from the cluster's
   * CA with the peer CN), under {@code m}'s id. Checked because Ratis checks a staged member's
   * progress only when the leader's event queue is idle or the member acknowledges an append: under
   * a steady write load a member that never answers stays staged for good, and every other
   * membership change is refused meanwhile (without writes it fails after 6 s). This catches a node
   * not started, an address where no node listens and a node of another cluster; not a node that
   * fails later. The check runs on the node asked, not on the leader, which is the one that
   * connects.
   */
  static String problem(Member m, PeerChannels peers) {
    ManagedChannel ch = peers.open(m.getRaftAddress(), 4 << 20);
    try {
      StatusResponse r =
          ClusterGrpc.newBlockingStub(ch)
              .withDeadlineAfter(2, TimeUnit.SECONDS)
              .status(StatusRequest.newBuilder().setLocalOnly(true).build());
      String id = r.getNodesCount() == 0 ? "" : r.getNodes(0).getMember().getId();
      if (!id.equals(m.getId())) {
        return "the node answering at " + m.getRaftAddress() + " is " + id + ", not " + m.getId();
      }
      return null;
    } catch (StatusRuntimeException e) {
      return "no node of this cluster answered at its Raft address "
          + m.getRaftAddress()
          + " (is it running, started with --join, with a certificate of this cluster?): "
          + e.getStatus().getCode();
    } catch (RuntimeException e) {
      return "its Raft address " + m.getRaftAddress() + " cannot be reached";
    } finally {
      ch.shutdownNow();
    }
  }
}
