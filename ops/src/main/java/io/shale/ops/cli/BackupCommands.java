package io.shale.ops.cli;

import io.shale.client.Member;
import io.shale.client.ShaleClient;
import io.shale.client.backup.BackupCorruptException;
import io.shale.client.backup.BackupManifest;
import io.shale.client.backup.BackupSave;
import io.shale.client.backup.BackupVerifier;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code shalectl backup ...}: take a backup, check one, seed a new cluster's node from one. */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description =
        "Backups: a consistent copy of one node's state at one Raft index (save), checked byte"
            + " by byte (verify), restored into a new cluster's data directory (restore).",
    subcommands = {
      BackupCommands.Save.class,
      BackupCommands.Verify.class,
      BackupCommands.Restore.class
    })
final class BackupCommands {
  private BackupCommands() {}

  private static Path local(Path p) {
    return Path.of(System.getProperty("shale.ops.cwd", ".")).resolve(p);
  }

  @Command(
      name = "save",
      mixinStandardHelpOptions = true,
      description =
          "Saves a backup of the leader (or --node) into DIR, which must not exist or be empty."
              + " With --incremental PREV, files PREV already holds are hard-linked, not fetched.")
  static final class Save extends ClientCommand {
    @Parameters(index = "0", paramLabel = "DIR")
    Path dir;

    @Option(
        names = "--node",
        paramLabel = "ID",
        description =
            "Take it on this node, reached at its API address as the cluster knows it (where"
                + " that is not reachable from here, e.g. docker-compose, give that node's"
                + " endpoint alone with --endpoints instead).")
    String node;

    @Option(
        names = "--incremental",
        paramLabel = "PREV",
        description = "An earlier backup (same file system) to share unchanged files with.")
    Path base;

    @Override
    int run(ShaleClient client, Output out) throws Exception {
      // Without --node, the node the client prefers (the leader once known), through the
      // command's endpoints; with it, the member's API address as the cluster knows it.
      String address = null;
      if (node != null) {
        for (Member m : client.cluster().members().members()) {
          if (m.id().equals(node)) {
            address = m.apiAddress();
          }
        }
        if (address == null) {
          err().println("no member " + node + " (members: " + client.cluster().members() + ")");
          return Shalectl.USAGE;
        }
      }
      Path to = local(dir);
      long[] lastShown = {0};
      BackupSave.Result r;
      try (ShaleClient one = address == null ? null : root().client(address)) {
        r =
            (one == null ? client : one)
                .backup(
                    to,
                    base == null ? null : local(base),
                    (files, of, bytes, ofBytes) -> {
                      long now = System.nanoTime();
                      if (files == of || now - lastShown[0] > 1_000_000_000L) {
                        lastShown[0] = now;
                        err()
                            .printf(
                                "backup: %d of %d files, %s of %s%n",
                                files, of, Output.bytes(bytes), Output.bytes(ofBytes));
                        err().flush();
                      }
                    });
      }
      BackupManifest m = r.manifest();
      if (out.json()) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("dir", to.toString());
        j.put("cluster", m.cluster());
        j.put("node", m.node());
        j.put("term", m.term());
        j.put("index", m.index());
        j.put("files", m.files().size());
        j.put("bytes", m.bytes());
        j.put("files_fetched", r.filesFetched());
        j.put("bytes_fetched", r.bytesFetched());
        j.put("files_shared", r.filesLinked());
        j.put("bytes_shared", r.bytesLinked());
        out.json(j);
      } else {
        out.line(
            "backup of cluster "
                + m.cluster()
                + " taken on "
                + m.node()
                + " at index "
                + m.index()
                + " (term "
                + m.term()
                + "): "
                + m.files().size()
                + " files, "
                + Output.bytes(m.bytes())
                + "; fetched "
                + r.filesFetched()
                + " ("
                + Output.bytes(r.bytesFetched())
                + "), shared with the earlier backup "
                + r.filesLinked()
                + " ("
                + Output.bytes(r.bytesLinked())
                + ") -> "
                + to);
      }
      return Shalectl.OK;
    }
  }

  /** A backup command that works on files only: no client. */
  abstract static class FileCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Output out = ((Shalectl) spec.root().userObject()).output(spec.commandLine().getOut());
      try {
        return run(out);
      } catch (BackupCorruptException e) {
        spec.commandLine().getErr().println("backup damaged: " + e.getMessage());
        return Shalectl.FAILED;
      } catch (java.io.IOException | IllegalArgumentException e) {
        spec.commandLine().getErr().println(e.getMessage());
        return Shalectl.FAILED;
      }
    }

    abstract int run(Output out) throws Exception;
  }

  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description =
          "Checks every byte of the backup in DIR against its manifest; a damaged byte is"
              + " reported with its file and offset (exit 1).")
  static final class Verify extends FileCommand {
    @Parameters(index = "0", paramLabel = "DIR")
    Path dir;

    @Override
    int run(Output out) throws Exception {
      BackupManifest m = BackupVerifier.verify(local(dir));
      out.line(
          "backup "
              + local(dir)
              + " verified: cluster "
              + m.cluster()
              + ", node "
              + m.node()
              + ", index "
              + m.index()
              + ", "
              + m.files().size()
              + " files, "
              + Output.bytes(m.bytes())
              + ", every byte as its manifest says");
      return Shalectl.OK;
    }
  }

  @Command(
      name = "restore",
      mixinStandardHelpOptions = true,
      description =
          "Seeds the empty data directory of one node of a new cluster, named --cluster, from the"
              + " backup in DIR (verified first). Run it for every node, from the same backup,"
              + " then start the nodes with node.cluster set to the new name.")
  static final class Restore extends FileCommand {
    @Parameters(index = "0", paramLabel = "DIR")
    Path dir;

    @Option(names = "--data-dir", required = true, paramLabel = "DATA_DIR")
    Path dataDir;

    @Option(names = "--cluster", required = true, paramLabel = "NEW_NAME")
    String cluster;

    @Override
    int run(Output out) throws Exception {
      BackupManifest m = io.shale.node.server.Restore.restore(local(dir), local(dataDir), cluster);
      out.line(
          "restored the backup of cluster "
              + m.cluster()
              + " at index "
              + m.index()
              + " into "
              + local(dataDir)
              + " as a node of cluster "
              + cluster
              + "; start it with node.cluster = \""
              + cluster
              + "\"");
      return Shalectl.OK;
    }
  }
}
