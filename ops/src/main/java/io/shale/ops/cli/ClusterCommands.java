package io.shale.ops.cli;

import io.shale.client.Member;
import io.shale.client.Members;
import io.shale.client.ShaleClient;
import io.shale.client.proto.EngineSummary;
import io.shale.client.proto.NodeStatus;
import io.shale.client.proto.WritePressure;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * shalectl's cluster commands: status, members, leader, snapshot, compact, stats. Each asks any
 * endpoint; the answering node asks the others (status, stats) or routes to the leader (membership,
 * leadership).
 */
final class ClusterCommands {
  private ClusterCommands() {}

  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description =
          "One line per node: id, address, role, term, applied index, write "
              + "pressure, L0 files, pending compaction bytes. Exit code 5 if a node is "
              + "unreachable or there is no leader.")
  static final class Status extends ClientCommand {
    @Override
    int run(ShaleClient client, Output out) {
      List<NodeStatus> nodes = client.cluster().status();
      if (out.json()) {
        out.json(nodes.stream().map(ClusterCommands::json).toList());
      } else {
        List<List<String>> rows = new ArrayList<>();
        for (NodeStatus n : nodes) {
          EngineSummary e = n.getEngine();
          rows.add(
              n.getReachable()
                  ? Shalectl.row(
                      n.getMember().getId(),
                      n.getMember().getApiAddress(),
                      n.getRole(),
                      n.getTerm(),
                      n.getAppliedIndex(),
                      pressure(n.getPressure()),
                      e.getLevel0Files(),
                      Output.bytes(e.getPendingCompactionBytes()))
                  : Shalectl.row(
                      n.getMember().getId(),
                      n.getMember().getApiAddress(),
                      "UNREACHABLE",
                      "-",
                      "-",
                      "-",
                      "-",
                      "-"));
        }
        out.table(
            List.of(
                "ID",
                "ADDRESS",
                "ROLE",
                "TERM",
                "APPLIED",
                "WRITE PRESSURE",
                "L0 FILES",
                "PENDING COMPACTION"),
            rows);
        nodes.stream()
            .filter(n -> !n.getReachable())
            .forEach(
                n ->
                    err()
                        .println(
                            "shalectl: "
                                + n.getMember().getId()
                                + " unreachable: "
                                + n.getError()));
        err().flush();
      }
      boolean allUp = nodes.stream().allMatch(NodeStatus::getReachable);
      boolean leader = nodes.stream().anyMatch(n -> n.getRole().equals("LEADER"));
      return allUp && leader ? Shalectl.OK : Shalectl.UNAVAILABLE;
    }
  }

  static String pressure(WritePressure p) {
    return p.getCondition().isEmpty() || p.getCondition().equals("NORMAL")
        ? "NORMAL"
        : p.getCondition()
            + " ("
            + p.getCause()
            + " "
            + (long) p.getMeasured()
            + "/"
            + (long) p.getThreshold()
            + ")";
  }

  static Map<String, Object> json(NodeStatus n) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", n.getMember().getId());
    m.put("api_address", n.getMember().getApiAddress());
    m.put("raft_address", n.getMember().getRaftAddress());
    m.put("reachable", n.getReachable());
    if (!n.getReachable()) {
      m.put("error", n.getError());
      return m;
    }
    m.put("role", n.getRole());
    m.put("leader_id", n.getLeaderId());
    m.put("term", n.getTerm());
    m.put("commit_index", n.getCommitIndex());
    m.put("applied_index", n.getAppliedIndex());
    m.put("snapshot_index", n.getSnapshotIndex());
    WritePressure p = n.getPressure();
    Map<String, Object> pm = new LinkedHashMap<>();
    pm.put("condition", p.getCondition());
    pm.put("cause", p.getCause());
    pm.put("measured", p.getMeasured());
    pm.put("threshold", p.getThreshold());
    pm.put("delay_ms", p.getDelayMs());
    m.put("write_pressure", pm);
    m.put("engine", engine(n.getEngine()));
    return m;
  }

  static Map<String, Object> engine(EngineSummary e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("persisted_index", e.getPersistedIndex());
    m.put("level0_files", e.getLevel0Files());
    m.put("pending_compaction_bytes", e.getPendingCompactionBytes());
    m.put("compactions_in_progress", e.getCompactionsInProgress());
    m.put("compactions_paused", e.getCompactionsPaused());
    m.put("memtable_bytes", e.getMemtableBytes());
    m.put("table_bytes", e.getTableBytes());
    m.put("files_per_level", List.copyOf(e.getFilesPerLevelList()));
    m.put("bloom_bytes_per_level", List.copyOf(e.getBloomBytesPerLevelList()));
    m.put("compaction_key_bytes_written", e.getCompactionKeyBytesWritten());
    m.put("compaction_value_bytes_written", e.getCompactionValueBytesWritten());
    m.put("blob_live_bytes", e.getBlobLiveBytes());
    m.put("blob_dead_bytes", e.getBlobDeadBytes());
    return m;
  }

  @Command(
      name = "stats",
      mixinStandardHelpOptions = true,
      description =
          "Engine statistics of a node (or of every node): files and bloom memory "
              + "per level, compaction bytes written by key and value, blobs, memtable.")
  static final class Stats extends ClientCommand {
    @Option(names = "--node", paramLabel = "ID", description = "Only this node.")
    String node;

    @Override
    int run(ShaleClient client, Output out) {
      List<NodeStatus> nodes =
          client.cluster().status().stream()
              .filter(n -> node == null || n.getMember().getId().equals(node))
              .toList();
      if (nodes.isEmpty()) {
        throw new IllegalArgumentException("no member " + node);
      }
      if (out.json()) {
        List<Object> all = new ArrayList<>();
        for (NodeStatus n : nodes) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("id", n.getMember().getId());
          m.put("reachable", n.getReachable());
          m.put("engine", n.getReachable() ? engine(n.getEngine()) : null);
          all.add(m);
        }
        out.json(all);
        return Shalectl.OK;
      }
      boolean first = true;
      for (NodeStatus n : nodes) {
        if (!first) {
          out.line("");
        }
        first = false;
        if (!n.getReachable()) {
          out.line(n.getMember().getId() + ": unreachable (" + n.getError() + ")");
          continue;
        }
        EngineSummary e = n.getEngine();
        out.line(
            n.getMember().getId()
                + " ("
                + n.getRole()
                + "), persisted index "
                + e.getPersistedIndex());
        out.table(
            List.of("ENGINE", "VALUE"),
            List.of(
                Shalectl.row("memtable", Output.bytes(e.getMemtableBytes())),
                Shalectl.row("tables", Output.bytes(e.getTableBytes())),
                Shalectl.row(
                    "compactions in progress",
                    e.getCompactionsInProgress()
                        + (e.getCompactionsPaused()
                            ? " (compactions paused: compact --resume)"
                            : "")),
                Shalectl.row("pending compaction", Output.bytes(e.getPendingCompactionBytes())),
                Shalectl.row(
                    "compaction written, keys", Output.bytes(e.getCompactionKeyBytesWritten())),
                Shalectl.row(
                    "compaction written, values", Output.bytes(e.getCompactionValueBytesWritten())),
                Shalectl.row("blob live", Output.bytes(e.getBlobLiveBytes())),
                Shalectl.row("blob dead", Output.bytes(e.getBlobDeadBytes()))));
        List<List<String>> levels = new ArrayList<>();
        int count = Math.max(e.getFilesPerLevelCount(), e.getBloomBytesPerLevelCount());
        for (int l = 0; l < count; l++) {
          levels.add(
              Shalectl.row(
                  "L" + l,
                  l < e.getFilesPerLevelCount() ? e.getFilesPerLevel(l) : 0,
                  Output.bytes(
                      l < e.getBloomBytesPerLevelCount() ? e.getBloomBytesPerLevel(l) : 0)));
        }
        out.table(List.of("LEVEL", "FILES", "BLOOM MEMORY"), levels);
      }
      return Shalectl.OK;
    }
  }

  static void print(Output out, Members m) {
    if (out.json()) {
      Map<String, Object> j = new LinkedHashMap<>();
      j.put("leader_id", m.leaderId());
      j.put(
          "members",
          m.members().stream()
              .map(
                  x -> {
                    Map<String, Object> e = new LinkedHashMap<>();
                    e.put("id", x.id());
                    e.put("raft_address", x.raftAddress());
                    e.put("api_address", x.apiAddress());
                    return e;
                  })
              .toList());
      out.json(j);
      return;
    }
    out.table(
        List.of("ID", "RAFT ADDRESS", "API ADDRESS", "LEADER"),
        m.members().stream()
            .map(
                x ->
                    Shalectl.row(
                        x.id(),
                        x.raftAddress(),
                        x.apiAddress(),
                        x.id().equals(m.leaderId()) ? "*" : ""))
            .toList());
  }

  @Command(
      name = "members",
      mixinStandardHelpOptions = true,
      description = "Lists, adds or removes voting members.",
      subcommands = {
        MemberCommands.ListMembers.class,
        MemberCommands.Add.class,
        MemberCommands.Remove.class
      })
  static final class MemberCommands {
    @Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = "The members and " + "which one leads.")
    static final class ListMembers extends ClientCommand {
      @Override
      int run(ShaleClient client, Output out) {
        print(out, client.cluster().members());
        return Shalectl.OK;
      }
    }

    @Command(
        name = "add",
        mixinStandardHelpOptions = true,
        description =
            "Adds a voting "
                + "member; its node must already run, started with --join. Answers once the member has "
                + "caught up; the node asked waits up to 30 s for that, so pass --deadline 40s to see "
                + "its answer rather than this tool's timeout. Refused at once if the new node does not "
                + "answer, or while another membership change is in progress.")
    static final class Add extends ClientCommand {
      @Parameters(index = "0", paramLabel = "ID")
      String id;

      @Option(names = "--raft-address", required = true, paramLabel = "HOST:PORT")
      String raftAddress;

      @Option(names = "--api-address", required = true, paramLabel = "HOST:PORT")
      String apiAddress;

      @Override
      int run(ShaleClient client, Output out) {
        print(out, client.cluster().addMember(new Member(id, raftAddress, apiAddress)));
        return Shalectl.OK;
      }
    }

    @Command(
        name = "remove",
        mixinStandardHelpOptions = true,
        description =
            "Removes a " + "member from the configuration (its node may then be stopped).")
    static final class Remove extends ClientCommand {
      @Parameters(index = "0", paramLabel = "ID")
      String id;

      @Override
      int run(ShaleClient client, Output out) {
        print(out, client.cluster().removeMember(id));
        return Shalectl.OK;
      }
    }
  }

  @Command(
      name = "leader",
      mixinStandardHelpOptions = true,
      description = "Leadership.",
      subcommands = {LeaderCommands.Transfer.class})
  static final class LeaderCommands {
    @Command(
        name = "transfer",
        mixinStandardHelpOptions = true,
        description = "Makes ID the " + "leader (waits until it leads).")
    static final class Transfer extends ClientCommand {
      @Parameters(index = "0", paramLabel = "ID")
      String id;

      @Override
      int run(ShaleClient client, Output out) {
        Members m = client.cluster().transferLeadership(id);
        if (out.json()) {
          out.json(Map.of("leader_id", m.leaderId()));
        } else {
          out.line("leader: " + m.leaderId());
        }
        return m.leaderId().equals(id) ? Shalectl.OK : Shalectl.FAILED;
      }
    }
  }

  @Command(
      name = "snapshot",
      mixinStandardHelpOptions = true,
      description =
          "Takes a snapshot (an engine checkpoint) on a node now; the Raft log "
              + "before it may then be purged. Prints the snapshot's log index.")
  static final class Snapshot extends ClientCommand {
    @Option(
        names = "--node",
        paramLabel = "ID",
        description = "The node (default: the one " + "answering).")
    String node;

    @Override
    int run(ShaleClient client, Output out) {
      long index = client.cluster().snapshot(node);
      if (out.json()) {
        out.json(Map.of("node", node == null ? "" : node, "index", index));
      } else {
        out.line("snapshot at index " + index);
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "compact",
      mixinStandardHelpOptions = true,
      description = {
        "Compacts a node's whole key range now and waits for it; or, with "
            + "--pause, holds the node's compactions and blob GC (running ones finish) until "
            + "--resume or its restart. A paused node's level 0 grows until write pressure "
            + "delays, then stops, writes: for maintenance windows and throttling drills."
      })
  static final class Compact extends ClientCommand {
    @Option(
        names = "--node",
        paramLabel = "ID",
        description = "The node (default: the one " + "answering).")
    String node;

    @picocli.CommandLine.ArgGroup(exclusive = true)
    Control control;

    static final class Control {
      @Option(names = "--pause", required = true, description = "Hold compactions.")
      boolean pause;

      @Option(names = "--resume", required = true, description = "Let compactions run again.")
      boolean resume;
    }

    @Override
    int run(ShaleClient client, Output out) {
      String what;
      if (control != null && control.pause) {
        client.cluster().pauseCompactions(node);
        what = "paused";
      } else if (control != null && control.resume) {
        client.cluster().resumeCompactions(node);
        what = "resumed";
      } else {
        client.cluster().compact(node);
        what = "compacted";
      }
      if (out.json()) {
        out.json(Map.of(what, node == null ? "" : node));
      } else {
        out.line(
            what.equals("compacted")
                ? "OK"
                : "compactions " + what + (node == null ? "" : " on " + node));
      }
      return Shalectl.OK;
    }
  }
}
