package io.shale.client.backup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What a backup directory holds: the cluster, node, Raft term and index it was taken at, and every
 * file with its size, SHA-256 and one CRC32C per {@link #BLOCK_BYTES} block (so a damaged byte is
 * located to its block). Written last, as {@code BACKUP}, once every file is synced: a directory
 * without it is an unfinished backup.
 *
 * <p>Format (text, one item per line): {@code shale-backup 1}; {@code cluster}, {@code node},
 * {@code term}, {@code index}, {@code created} lines; {@code file <name> <size> <sha256> <crc,...>}
 * lines ({@code -} for an empty file); last {@code crc32c <8 hex digits>} over every byte before
 * it.
 */
public record BackupManifest(
    String cluster, String node, long term, long index, Instant created, List<FileInfo> files) {
  /** The manifest's file name in a backup directory. */
  public static final String FILE = "BACKUP";

  /** The subdirectory holding the checkpoint's files. */
  public static final String FILES = "files";

  /** Bytes per block checksum. */
  public static final int BLOCK_BYTES = 1 << 16;

  private static final String MAGIC = "shale-backup";
  private static final int VERSION = 1;

  /** One file of the backup. */
  public record FileInfo(String name, long size, byte[] sha256, int[] blockCrcs) {
    /** The key under which equal files are shared between backups: size and SHA-256. */
    String identity() {
      return size + ":" + HexFormat.of().formatHex(sha256);
    }
  }

  public BackupManifest {
    files = List.copyOf(files);
  }

  /** The total size of the files. */
  public long bytes() {
    return files.stream().mapToLong(FileInfo::size).sum();
  }

  /** Writes {@code dir/BACKUP} and syncs it. */
  public void write(Path dir) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append(MAGIC).append(' ').append(VERSION).append('\n');
    b.append("cluster ").append(cluster).append('\n');
    b.append("node ").append(node).append('\n');
    b.append("term ").append(term).append('\n');
    b.append("index ").append(index).append('\n');
    b.append("created ").append(created).append('\n');
    for (FileInfo f : files) {
      b.append("file ")
          .append(f.name())
          .append(' ')
          .append(f.size())
          .append(' ')
          .append(HexFormat.of().formatHex(f.sha256()))
          .append(' ')
          .append(crcList(f.blockCrcs()))
          .append('\n');
    }
    String body = b.toString();
    byte[] bytes = (body + "crc32c " + crc(body) + "\n").getBytes(StandardCharsets.UTF_8);
    BackupFiles.writeDurably(dir.resolve(FILE), bytes);
  }

  /** Reads {@code dir/BACKUP}; a damaged or unknown manifest fails naming the file and line. */
  public static BackupManifest read(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.isRegularFile(file)) {
      throw new IOException(
          file + " does not exist: " + dir + " is not a backup, or one that did not finish");
    }
    String text = Files.readString(file, StandardCharsets.UTF_8);
    int crcAt = text.lastIndexOf("crc32c ");
    if (crcAt < 0
        || !text.substring(crcAt).trim().equals("crc32c " + crc(text.substring(0, crcAt)))) {
      throw new BackupCorruptException(
          file, Math.max(0, crcAt), "the manifest's crc32c line does not match its contents");
    }
    String[] lines = text.substring(0, crcAt).split("\n");
    if (lines.length < 6 || !lines[0].equals(MAGIC + " " + VERSION)) {
      throw new BackupCorruptException(
          file, 0, "not a version " + VERSION + " backup manifest (first line: " + lines[0] + ")");
    }
    List<FileInfo> files = new ArrayList<>();
    for (int i = 6; i < lines.length; i++) {
      String[] f = lines[i].split(" ");
      if (f.length != 5 || !f[0].equals("file")) {
        throw new BackupCorruptException(file, 0, "line " + (i + 1) + " is not a file line");
      }
      files.add(
          new FileInfo(f[1], Long.parseLong(f[2]), HexFormat.of().parseHex(f[3]), parseCrcs(f[4])));
    }
    return new BackupManifest(
        value(lines[1], "cluster"),
        value(lines[2], "node"),
        Long.parseLong(value(lines[3], "term")),
        Long.parseLong(value(lines[4], "index")),
        Instant.parse(value(lines[5], "created")),
        files);
  }

  private static String value(String line, String key) throws IOException {
    if (!line.startsWith(key + " ")) {
      throw new IOException("backup manifest: expected a \"" + key + "\" line, found: " + line);
    }
    return line.substring(key.length() + 1);
  }

  private static String crcList(int[] crcs) {
    if (crcs.length == 0) {
      return "-";
    }
    StringBuilder b = new StringBuilder();
    for (int c : crcs) {
      b.append(b.length() == 0 ? "" : ",").append(HexFormat.of().toHexDigits(c));
    }
    return b.toString();
  }

  private static int[] parseCrcs(String s) {
    if (s.equals("-")) {
      return new int[0];
    }
    return Arrays.stream(s.split(",")).mapToInt(h -> (int) Long.parseLong(h, 16)).toArray();
  }

  static String crc(String s) {
    CRC32C c = new CRC32C();
    c.update(s.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().toHexDigits((int) c.getValue());
  }
}
