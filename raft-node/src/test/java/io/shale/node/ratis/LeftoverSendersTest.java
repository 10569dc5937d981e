package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftConfiguration;
import org.junit.jupiter.api.Test;

/**
 * Which senders count as left over. The election itself, with Ratis, is in {@code
 * RemovalAcrossLeaderChangeTest}.
 */
class LeftoverSendersTest {
  private static RaftConfiguration conf(List<String> current, List<String> previous) {
    return new RaftConfiguration() {
      @Override
      public RaftPeer getPeer(RaftPeerId id, RaftPeerRole... roles) {
        return null;
      }

      @Override
      public Collection<RaftPeer> getAllPeers(RaftPeerRole role) {
        return List.of();
      }

      @Override
      public Collection<RaftPeer> getCurrentPeers(RaftPeerRole role) {
        return role == RaftPeerRole.FOLLOWER ? peers(current) : List.of();
      }

      @Override
      public Collection<RaftPeer> getPreviousPeers(RaftPeerRole role) {
        return role == RaftPeerRole.FOLLOWER ? peers(previous) : List.of();
      }

      @Override
      public long getLogEntryIndex() {
        return 1;
      }
    };
  }

  private static List<RaftPeer> peers(List<String> ids) {
    return ids.stream().map(id -> RaftPeer.newBuilder().setId(id).build()).toList();
  }

  @Test
  void aSenderForAPeerRemovedBeforeTheElectionIsLeftOnceTheConfigurationIsFinal() {
    assertThat(
            LeftoverSenders.leftovers(
                Set.of("n1", "n3"), Set.of("n3"), conf(List.of("n1", "n2"), List.of())))
        .containsExactly("n3");
  }

  @Test
  void whileTheChangeIsHalfDoneTheOldMembersSendersAreStillNeeded() {
    assertThat(
            LeftoverSenders.leftovers(
                Set.of("n1", "n3"),
                Set.of("n3"),
                conf(List.of("n1", "n2"), List.of("n1", "n2", "n3"))))
        .isEmpty();
  }

  @Test
  void aPeerThatIsAMemberAgainOrWasNeverRemovedIsNotLeftOver() {
    assertThat(
            LeftoverSenders.leftovers(
                Set.of("n1", "n3"), Set.of("n3"), conf(List.of("n1", "n2", "n3"), List.of())))
        .isEmpty();
    assertThat(
            LeftoverSenders.leftovers(
                Set.of("n1", "n4"), Set.of("n3"), conf(List.of("n1", "n2"), List.of())))
        .isEmpty();
  }
}
