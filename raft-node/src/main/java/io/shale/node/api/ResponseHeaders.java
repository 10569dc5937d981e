package io.shale.node.api;

import io.shale.client.proto.ResponseHeader;
import org.apache.ratis.server.RaftServer;

/** The header every API response carries: the answering node, its term, the applied index. */
final class ResponseHeaders {
  private ResponseHeaders() {}

  /** The header of an answer from {@code division}'s node reflecting {@code appliedIndex}. */
  static ResponseHeader of(RaftServer.Division division, long appliedIndex) {
    return ResponseHeader.newBuilder()
        .setNodeId(division.getId().toString())
        .setTerm(division.getInfo().getCurrentTerm())
        .setAppliedIndex(appliedIndex)
        .build();
  }
}
