package io.shale.node.server;

import io.shale.client.backup.BackupManifest;
import io.shale.client.backup.BackupVerifier;
import io.shale.engine.io.DurableFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/**
 * Seeds one node's data directory of a new cluster from a backup: the backup is verified byte by
 * byte first, its checkpoint copied (not linked: the engine appends to its manifest) and synced
 * into {@code data_dir/engine}, and the directory given the new cluster's name ({@link
 * ClusterIdentity}). Every member of the new cluster is restored from the same backup, so each
 * starts at the backup's Raft index with the same state; the node opens the engine at that index
 * and Ratis starts its log after it.
 *
 * <p>Refused: a non-empty data directory, and the backup's own cluster name (the Raft group id is
 * derived from the name: a restored node under the old name could join the old cluster).
 */
public final class Restore {
  private Restore() {}

  /**
   * Restores {@code backup} into the empty {@code dataDir} as a node of cluster {@code cluster}.
   */
  public static BackupManifest restore(Path backup, Path dataDir, String cluster)
      throws IOException {
    if (Files.exists(dataDir) && !isEmptyDirectory(dataDir)) {
      throw new IOException(
          "data directory " + dataDir + " is not empty: a restore only seeds a new node");
    }
    BackupManifest m = BackupVerifier.verify(backup);
    if (m.cluster().equals(cluster)) {
      throw new IllegalArgumentException(
          "the backup was taken from cluster \""
              + cluster
              + "\": a restored cluster needs a new name (node.cluster), so that none of its"
              + " nodes can ever join the cluster it was taken from");
    }
    Path engine = dataDir.resolve("engine");
    Files.createDirectories(engine);
    for (BackupManifest.FileInfo f : m.files()) {
      Path target = engine.resolve(f.name());
      Files.copy(backup.resolve(BackupManifest.FILES).resolve(f.name()), target);
      try (FileChannel ch = FileChannel.open(target, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
    }
    DurableFiles.syncDirectory(engine);
    ClusterIdentity.write(dataDir, cluster);
    return m;
  }

  private static boolean isEmptyDirectory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }
}
