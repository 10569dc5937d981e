package io.shale.ops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.testing.ShaleCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * shalectl's commands, run as a user types them (the same command line the script runs), against a
 * real 3-node cluster: their output in both formats and their exit codes.
 */
class ShalectlTest {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  @TempDir Path dir;

  record Result(int code, String out, String err) {}

  static Result run(String... args) {
    List<String> all =
        new ArrayList<>(List.of("--endpoints", String.join(",", cluster.endpoints())));
    all.addAll(List.of(args));
    CommandLine cl = Shalectl.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(all.toArray(String[]::new));
    return new Result(code, out.toString(), err.toString());
  }

  @Test
  void putGetDelWithExitCodes() throws Exception {
    assertThat(run("put", "cli/a", "hello")).isEqualTo(new Result(0, "OK\n", ""));
    assertThat(run("get", "cli/a")).isEqualTo(new Result(0, "hello\n", ""));
    Result json = run("get", "cli/a", "-o", "json");
    assertThat(json.code()).isZero();
    assertThat(json.out())
        .matches(
            "\\{\"key\":\"cli/a\",\"value\":\"hello\",\"mod_index\":\\d+,"
                + "\"create_index\":\\d+,\"version\":1}\n");
    Result missing = run("get", "cli/none");
    assertThat(missing.code()).isEqualTo(3);
    assertThat(missing.err()).contains("key 'cli/none' not found");
    assertThat(run("del", "cli/a").code()).isZero();
    assertThat(run("get", "cli/a").code()).isEqualTo(3);

    Path file = dir.resolve("value.bin");
    Files.write(file, "from a file\twith a tab".getBytes());
    assertThat(run("put", "cli/f", "--file", file.toString()).code()).isZero();
    assertThat(run("get", "cli/f", "-o", "json").out())
        .contains("\"value\":\"from a file\\twith a tab\"");
    assertThat(run("get", "cli/f", "--stale").code()).isZero();
  }

  @Test
  void scanAndRangeDeletes() {
    for (int i = 0; i < 12; i++) {
      assertThat(run("put", String.format("scan/%02d", i), "v" + i).code()).isZero();
    }
    Result all = run("scan", "--prefix", "scan/");
    assertThat(all.code()).isZero();
    assertThat(all.out().lines()).hasSize(12).first().isEqualTo("scan/00\tv0");
    assertThat(run("scan", "--prefix", "scan/", "--limit", "3", "--keys-only").out())
        .isEqualTo("scan/00\nscan/01\nscan/02\n");
    assertThat(run("scan", "--from", "scan/05", "--to", "scan/08", "--reverse").out())
        .isEqualTo("scan/07\tv7\nscan/06\tv6\nscan/05\tv5\n");
    assertThat(run("scan", "--prefix", "scan/1", "-o", "json").out())
        .isEqualTo(
            "[{\"key\":\"scan/10\",\"value\":\"v10\"},{\"key\":\"scan/11\",\"value\":\"v11\"}]\n");
    assertThat(run("del", "--from", "scan/00", "--to", "scan/06").code()).isZero();
    assertThat(run("scan", "--prefix", "scan/", "--keys-only").out().lines()).hasSize(6);
    assertThat(run("del", "--prefix", "scan/").code()).isZero();
    assertThat(run("scan", "--prefix", "scan/").out()).isEmpty();
  }

  @Test
  void transactionFromASpecFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
      throws Exception {
    java.nio.file.Path spec = tmp.resolve("take-lock.txn");
    java.nio.file.Files.writeString(
        spec,
        "# take the lock if nobody holds it\n"
            + "if version(txn/lock) == 0\n"
            + "then put txn/lock \"worker 1\"\n"
            + "then get txn/lock\n"
            + "else get txn/lock\n");
    Result taken = run("txn", "--file", spec.toString());
    assertThat(taken).isEqualTo(new Result(0, "SUCCEEDED\ntxn/lock\tworker 1\n", ""));
    Result held = run("txn", "--file", spec.toString(), "-o", "json");
    assertThat(held.code()).isEqualTo(4);
    assertThat(held.out())
        .startsWith("{\"succeeded\":false,\"index\":")
        .contains("\"value\":\"worker 1\"", "\"version\":1");
    java.nio.file.Files.writeString(spec, "if size(k) == 1\n");
    Result bad = run("txn", "--file", spec.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).contains("line 1", "TARGET is value, version, create or mod");
  }

  @Test
  void watchPrintsTheChangesFromAStartIndex() {
    assertThat(run("put", "w/a", "1").code()).isZero();
    String index =
        run("get", "w/a", "-o", "json")
            .out()
            .replaceAll("(?s).*\"mod_index\":(\\d+).*", "$1")
            .strip();
    assertThat(run("put", "w/b", "2").code()).isZero();
    assertThat(run("del", "w/a").code()).isZero();
    Result r = run("watch", "--prefix", "w/", "--start-index", index, "--count", "3");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out().lines().toList())
        .hasSize(3)
        .satisfies(l -> assertThat(l.get(0)).startsWith("PUT w/a 1 (mod index " + index + ")"))
        .satisfies(l -> assertThat(l.get(1)).startsWith("PUT w/b 2 (mod index "))
        .satisfies(l -> assertThat(l.get(2)).startsWith("DELETE w/a (mod index "));
  }

  @Test
  void compareAndSet() {
    assertThat(run("cas", "cas/k", "1", "--expect-absent")).isEqualTo(new Result(0, "OK\n", ""));
    Result failed = run("cas", "cas/k", "2", "--expect-absent");
    assertThat(failed.code()).isEqualTo(4);
    assertThat(failed.out()).startsWith("NOT APPLIED: cas/k = 1 (mod index ");
    assertThat(run("cas", "cas/k", "2", "--expect", "1").code()).isZero();
    String index =
        run("get", "cas/k", "-o", "json")
            .out()
            .replaceAll("(?s).*\"mod_index\":(\\d+).*", "$1")
            .strip();
    assertThat(run("cas", "cas/k", "3", "--expect-mod-index", index).code()).isZero();
    assertThat(run("cas", "cas/k", "4", "--expect-mod-index", index, "-o", "json").out())
        .startsWith("{\"applied\":false,\"current\":{\"key\":\"cas/k\",\"value\":\"3\"");
    assertThat(run("cas", "cas/k", "--delete", "--expect", "3").code()).isZero();
    assertThat(run("get", "cas/k").code()).isEqualTo(3);
  }

  @Test
  void statusMembersStatsSnapshotCompactAndLeaderTransfer() throws Exception {
    Result status = run("status");
    assertThat(status.code()).as(status.err()).isZero();
    List<String> lines = status.out().lines().toList();
    assertThat(lines.get(0))
        .startsWith("ID")
        .contains(
            "ADDRESS",
            "ROLE",
            "TERM",
            "APPLIED",
            "WRITE PRESSURE",
            "L0 FILES",
            "PENDING COMPACTION");
    assertThat(lines).hasSize(4);
    assertThat(lines.stream().filter(l -> l.contains("LEADER")).count()).isEqualTo(1);
    assertThat(lines.subList(1, 4)).allMatch(l -> l.contains("NORMAL"));
    assertThat(run("status", "-o", "json").out())
        .startsWith("[{\"id\":\"n")
        .contains("\"role\":\"LEADER\"", "\"level0_files\":", "\"bloom_bytes_per_level\":[");

    Result members = run("members", "list");
    assertThat(members.out().lines()).hasSize(4);
    String leader = cluster.leader();
    assertThat(members.out().lines().filter(l -> l.endsWith("*")).findFirst().orElseThrow())
        .startsWith(leader);

    for (int i = 0; i < 30; i++) {
      run("put", "stats/" + i, "x".repeat(100));
    }
    Result snapshot = run("snapshot", "--node", "n1");
    assertThat(snapshot.code()).as(snapshot.err()).isZero();
    assertThat(snapshot.out()).matches("snapshot at index [1-9]\\d*\n");
    assertThat(run("compact", "--node", "n2").code()).isZero();
    Result pause = run("compact", "--node", "n2", "--pause");
    assertThat(pause.out()).isEqualTo("compactions paused on n2\n");
    assertThat(cluster.node("n2").stateMachine().engine().compactionsPaused()).isTrue();
    assertThat(run("stats", "--node", "n2").out()).contains("compactions paused");
    assertThat(run("compact", "--node", "n2", "--pause", "--resume").code()).isEqualTo(2);
    assertThat(run("compact", "--node", "n2", "--resume").out())
        .isEqualTo("compactions resumed on n2\n");
    assertThat(cluster.node("n2").stateMachine().engine().compactionsPaused()).isFalse();
    Result stats = run("stats", "--node", "n2");
    assertThat(stats.out())
        .startsWith("n2 (")
        .contains(
            "compaction written, keys",
            "compaction written, values",
            "LEVEL",
            "BLOOM MEMORY",
            "L0",
            "L6");
    assertThat(run("stats", "--node", "n2", "-o", "json").out())
        .contains("\"compaction_key_bytes_written\":", "\"bloom_bytes_per_level\":[");

    String target =
        cluster.runningNodes().stream().filter(n -> !n.equals(leader)).findFirst().orElseThrow();
    Result transfer = run("leader", "transfer", target);
    assertThat(transfer).isEqualTo(new Result(0, "leader: " + target + "\n", ""));
    assertThat(cluster.leader()).isEqualTo(target);
  }

  @Test
  void membersAddAndRemoveANodeStartedToJoin() throws Exception {
    var peer = cluster.local().newPeer("n4");
    cluster.local().startJoining("n4");
    Result added =
        run(
            "members",
            "add",
            "n4",
            "--raft-address",
            peer.raftAddress(),
            "--api-address",
            peer.apiAddress());
    assertThat(added.code()).as(added.err()).isZero();
    assertThat(added.out()).contains("n4  " + peer.raftAddress() + "  " + peer.apiAddress());
    assertThat(run("members", "list", "-o", "json").out()).contains("\"id\":\"n4\"");
    Result removed = run("members", "remove", "n4");
    assertThat(removed.code()).as(removed.err()).isZero();
    assertThat(removed.out()).doesNotContain("n4");
    cluster.stop("n4");
  }

  @Test
  void usageErrorsAndHelp() {
    Result help = run("--help");
    assertThat(help.code()).isZero();
    assertThat(help.out())
        .contains(
            "put",
            "get",
            "del",
            "scan",
            "cas",
            "status",
            "members",
            "leader",
            "snapshot",
            "compact",
            "stats",
            "Exit codes:");
    for (String command :
        List.of("put", "get", "del", "scan", "cas", "status", "stats", "snapshot", "compact")) {
      Result h = run(command, "--help");
      assertThat(h.code()).as(command).isZero();
      assertThat(h.out()).as(command).startsWith("Usage: shalectl " + command);
    }
    assertThat(run("members", "add", "--help").out()).contains("--raft-address");
    Result noValue = run("put", "k");
    assertThat(noValue.code()).isEqualTo(2);
    assertThat(noValue.err()).contains("put needs a VALUE or --file");
    assertThat(run("scan").code()).isEqualTo(2);
    assertThat(run("frobnicate").code()).isEqualTo(2);
    Result badOutput = run("get", "k", "-o", "xml");
    assertThat(badOutput.code()).isEqualTo(2);
    assertThat(badOutput.err()).contains("--output must be table or json");
    Result tooLarge = run("put", "k".repeat(70_000), "v");
    assertThat(tooLarge.code()).isEqualTo(2);
    assertThat(tooLarge.err()).contains("limits.max_key_size");
  }

  @Test
  void leaseGrantPutTtlListRevokeWithExitCodes() {
    Result granted = run("lease", "grant", "30s", "-o", "json");
    assertThat(granted.code()).isZero();
    assertThat(granted.out()).matches("\\{\"id\":\\d+,\"ttl_ms\":30000}\n");
    String id = granted.out().replaceAll("\\{\"id\":(\\d+),.*\n", "$1");
    assertThat(run("put", "cli/leased", "v", "--lease", id).code()).isZero();
    Result ttl = run("lease", "ttl", id, "--keys");
    assertThat(ttl.code()).isZero();
    assertThat(ttl.out())
        .startsWith("lease " + id + ": granted TTL 30000 ms, ")
        .contains("  cli/leased\n");
    assertThat(run("lease", "list").out()).contains(id);
    assertThat(run("lease", "keep-alive", id, "--for", "300ms").out())
        .isEqualTo("lease " + id + " kept alive for 300 ms\n");
    assertThat(run("lease", "revoke", id))
        .isEqualTo(new Result(0, "lease " + id + " revoked, 1 keys deleted\n", ""));
    assertThat(run("get", "cli/leased").code()).isEqualTo(3);
    Result gone = run("lease", "ttl", id);
    assertThat(gone.code()).isEqualTo(3);
    assertThat(gone.err()).contains("lease " + id + " does not live");
    assertThat(run("put", "cli/leased", "v", "--lease", id).code()).isEqualTo(3);
    assertThat(run("lease", "revoke", id).code()).isEqualTo(3);
    assertThat(run("lease", "grant", "10ms").code()).isEqualTo(2);
  }

  @Test
  void backupSaveIncrementalVerifyAndRestore() throws Exception {
    for (int i = 0; i < 50; i++) {
      assertThat(run("put", "bk/" + i, "v" + i).code()).isZero();
    }
    Path full = dir.resolve("full");
    Result saved = run("backup", "save", full.toString());
    assertThat(saved.code()).as(saved.err()).isZero();
    assertThat(saved.out()).startsWith("backup of cluster test-cluster taken on n");
    assertThat(saved.err()).contains("files,").contains(" of ");
    assertThat(run("put", "bk/late", "x").code()).isZero();
    Path incremental = dir.resolve("incremental");
    Result json =
        run(
            "backup",
            "save",
            incremental.toString(),
            "--incremental",
            full.toString(),
            "--node",
            "n2",
            "-o",
            "json");
    assertThat(json.code()).as(json.err()).isZero();
    assertThat(json.out()).contains("\"node\":\"n2\"").contains("\"files_fetched\":");
    assertThat(run("backup", "verify", incremental.toString()).out())
        .contains("verified")
        .contains("every byte as its manifest says");

    Path restored = dir.resolve("data-n1");
    Result r = restore(incremental, restored, "test-cluster");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("needs a new name");
    r = restore(incremental, restored, "copy");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("as a node of cluster copy");
    assertThat(Files.list(restored.resolve("engine")).count()).isPositive();
    r = restore(incremental, restored, "copy");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("not empty");

    // One byte of the manifest's first listed file, flipped: named with its file and offset.
    String first =
        Files.readAllLines(incremental.resolve("BACKUP")).stream()
            .filter(l -> l.startsWith("file "))
            .findFirst()
            .orElseThrow()
            .split(" ")[1];
    Path damaged = incremental.resolve("files").resolve(first);
    byte[] bytes = Files.readAllBytes(damaged);
    Files.delete(damaged); // a hard link shared with the full backup: damage this copy only
    bytes[bytes.length / 2] ^= 1;
    Files.write(damaged, bytes);
    Result bad = run("backup", "verify", incremental.toString());
    assertThat(bad.code()).isEqualTo(1);
    assertThat(bad.err()).contains("backup damaged: ").contains(first).contains("at offset ");
    assertThat(run("backup", "verify", full.toString()).code()).isZero();
  }

  private static Result restore(Path backup, Path dataDir, String cluster) {
    return run(
        "backup",
        "restore",
        backup.toString(),
        "--data-dir",
        dataDir.toString(),
        "--cluster",
        cluster);
  }

  @Test
  void anUnreachableClusterIsExitCode5() {
    CommandLine cl = Shalectl.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err));
    cl.setOut(new PrintWriter(new StringWriter()));
    int code = cl.execute("--endpoints", "127.0.0.1:1", "--deadline", "2s", "get", "k");
    assertThat(code).isEqualTo(5);
    assertThat(err.toString())
        .startsWith("shalectl: no node could serve the request")
        .contains("127.0.0.1:1");
  }
}
