package io.shale.node.api;

import io.shale.client.proto.EngineSummary;
import io.shale.client.proto.Member;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.WritePressure;
import io.shale.engine.Engine;
import io.shale.engine.EngineStats;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;

/** A node's answer to {@code Cluster.Status}: its Raft state and its engine's summary. */
final class NodeStatusReport {
  private NodeStatusReport() {}

  /** A member as the API shows it; its API address travels in Ratis's data-stream field. */
  static Member member(RaftPeer p) {
    return Member.newBuilder()
        .setId(p.getId().toString())
        .setRaftAddress(p.getAddress())
        .setApiAddress(p.getDataStreamAddress() == null ? "" : p.getDataStreamAddress())
        .build();
  }

  /** This node's status: Raft role and indexes, and its engine's summary (if it has one now). */
  static NodeStatus of(RaftServer.Division division, Engine e) {
    var info = division.getInfo();
    RaftPeer self = division.getPeer();
    NodeStatus.Builder b =
        NodeStatus.newBuilder()
            .setMember(member(self))
            .setReachable(true)
            .setRole(info.getCurrentRole().name())
            .setLeaderId(info.getLeaderId() == null ? "" : info.getLeaderId().toString())
            .setTerm(info.getCurrentTerm())
            .setCommitIndex(division.getRaftLog().getLastCommittedIndex())
            .setAppliedIndex(info.getLastAppliedIndex())
            .setSnapshotIndex(Math.max(0, division.getRaftLog().getSnapshotIndex()));
    if (e != null) {
      EngineStats s = e.stats();
      EngineSummary.Builder es =
          EngineSummary.newBuilder()
              .setLevel0Files(s.levels().get(0).files())
              .setPendingCompactionBytes(s.pendingCompactionBytes())
              .setCompactionsInProgress(s.compactionsInProgress())
              .setMemtableBytes(s.memtableBytes())
              .setTableBytes(s.totalBytes())
              .setBlobLiveBytes(
                  s.blobFiles().stream().mapToLong(EngineStats.BlobFileStats::liveBytes).sum())
              .setBlobDeadBytes(
                  s.blobFiles().stream().mapToLong(EngineStats.BlobFileStats::deadBytes).sum())
              .setCompactionKeyBytesWritten(s.compactionWritten().keyBytes())
              .setCompactionValueBytesWritten(
                  s.compactionWritten().valueBytes() + s.compactionWritten().blobBytes())
              .setPersistedIndex(s.persistedAppliedIndex())
              .setCompactionsPaused(e.compactionsPaused());
      for (EngineStats.LevelStats l : s.levels()) {
        es.addBloomBytesPerLevel(l.bloomBytes()).addFilesPerLevel(l.files());
      }
      b.setEngine(es);
      var p = s.writePressure();
      b.setPressure(
          WritePressure.newBuilder()
              .setCondition(p.condition().name())
              .setCause(p.cause().name())
              .setMeasured(p.measured())
              .setThreshold(p.threshold())
              .setDelayMs(p.suggestedDelay().toMillis()));
    }
    return b.build();
  }
}
