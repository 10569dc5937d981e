package io.shale.client;

import java.util.List;

/** The cluster's voting members and the leader's id (empty when none is known). */
public record Members(List<Member> members, String leaderId) {
  public Members {
    members = List.copyOf(members);
  }
}
