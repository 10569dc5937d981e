package io.shale.node.server;

import io.shale.engine.io.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/**
 * The cluster a data directory belongs to, in {@code data_dir/CLUSTER}: written at the first start
 * (or by a restore, with the restored cluster's new name), checked at every later one. The Raft
 * group id is derived from the cluster name, so a node started with another cluster's name would
 * take part in that cluster with this directory's data; refusing to start is the only safe answer.
 *
 * <p>Format (text): {@code shale-cluster-identity 1}, {@code cluster=<name>}, then {@code crc32c=<8
 * hex digits>} over the bytes before that line.
 */
public final class ClusterIdentity {
  static final String FILE = "CLUSTER";
  private static final String MAGIC = "shale-cluster-identity";
  private static final int VERSION = 1;

  private ClusterIdentity() {}

  /**
   * Records {@code cluster} as the identity of {@code dataDir} if it has none; fails if it holds
   * another.
   */
  public static void claim(Path dataDir, String cluster) throws IOException {
    String recorded = read(dataDir);
    if (recorded == null) {
      write(dataDir, cluster);
    } else if (!recorded.equals(cluster)) {
      throw new IOException(
          "data directory "
              + dataDir
              + " belongs to cluster \""
              + recorded
              + "\" ("
              + dataDir.resolve(FILE)
              + "), but node.cluster is \""
              + cluster
              + "\": refusing to start, which would join this data to another cluster (a"
              + " restored backup gets a new cluster name; set node.cluster to it)");
    }
  }

  /** The cluster recorded for {@code dataDir}, or null if none is. */
  public static String read(Path dataDir) throws IOException {
    Path file = dataDir.resolve(FILE);
    if (!Files.exists(file)) {
      return null;
    }
    byte[] bytes = Files.readAllBytes(file);
    String text = new String(bytes, StandardCharsets.UTF_8);
    int crcLine = text.lastIndexOf("crc32c=");
    String[] lines = text.split("\n");
    if (lines.length != 3
        || !lines[0].equals(MAGIC + " " + VERSION)
        || !lines[1].startsWith("cluster=")
        || crcLine < 0
        || !lines[2].equals("crc32c=" + crc(text.substring(0, crcLine)))) {
      throw new IOException(
          "cluster identity file "
              + file
              + " is damaged or of an unknown version (expected \""
              + MAGIC
              + " "
              + VERSION
              + "\", a cluster= line and a matching crc32c= line; "
              + bytes.length
              + " bytes)");
    }
    return lines[1].substring("cluster=".length());
  }

  /** Writes (durably, replacing any) {@code cluster} as the identity of {@code dataDir}. */
  public static void write(Path dataDir, String cluster) throws IOException {
    if (cluster.isEmpty() || cluster.contains("\n")) {
      throw new IllegalArgumentException("a cluster name must be one non-empty line");
    }
    Files.createDirectories(dataDir);
    String body = MAGIC + " " + VERSION + "\ncluster=" + cluster + "\n";
    String text = body + "crc32c=" + crc(body) + "\n";
    DurableFiles.replaceAtomically(dataDir.resolve(FILE), text.getBytes(StandardCharsets.UTF_8));
  }

  private static String crc(String s) {
    CRC32C c = new CRC32C();
    c.update(s.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().toHexDigits((int) c.getValue());
  }
}
