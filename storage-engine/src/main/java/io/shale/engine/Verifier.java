package io.shale.engine;

import io.shale.engine.blob.BlobFileReader;
import io.shale.engine.blob.BlobFiles;
import io.shale.engine.blob.BlobPointer;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.ValueKind;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * Checks every checksum of an engine directory without modifying it: CURRENT, the manifest, every
 * block of every table the manifest lists (plus the table's properties against the manifest's
 * copy), every record of every blob file it lists, and every blob pointer of every table against
 * the value it points to. Safe to run on a directory no engine has open; run from the command line
 * as {@code java -cp storage-engine.jar io.shale.engine.Verifier DIR}.
 */
public final class Verifier {
  private Verifier() {}

  /** What a verification found. An empty {@code problems} list means the directory is sound. */
  public record Report(
      List<String> problems,
      int tables,
      long blocks,
      long bytes,
      long blobPointers,
      List<String> unreferencedTables) {}

  public static Report verify(Path dir) throws IOException {
    List<String> problems = new ArrayList<>();
    List<String> unreferenced = new ArrayList<>();
    List<FileMetadata> live;
    Version version;
    try {
      version = VersionSet.readVersion(dir, 64);
      live = version.allFiles();
    } catch (CorruptionException e) {
      problems.add(e.getMessage());
      return new Report(problems, 0, 0, 0, 0, unreferenced);
    }
    int tables = 0;
    long blocks = 0;
    long bytes = 0;
    BlockCache noCache = new BlockCache(0);
    long pointers = 0;
    BlobFiles blobs = new BlobFiles(n -> FileNames.blob(dir, n));
    Set<Long> listed = new HashSet<>();
    for (FileMetadata f : live) {
      listed.add(f.number());
      Path p = FileNames.table(dir, f.number());
      if (!Files.exists(p)) {
        problems.add(p + ": listed in the manifest but missing");
        continue;
      }
      long size = Files.size(p);
      if (size != f.size()) {
        problems.add(p + ": " + size + " bytes, the manifest says " + f.size());
        continue;
      }
      TableReader r = null;
      try {
        r = TableReader.open(p, f.number(), noCache);
        blocks += r.verifyAllBlocks();
        pointers += checkBlobPointers(r, version, blobs, problems);
        if (r.properties().entries() != f.properties().entries()
            || !Arrays.equals(r.properties().smallestKey(), f.smallestKey())
            || !Arrays.equals(r.properties().largestKey(), f.largestKey())) {
          problems.add(p + ": properties differ from the manifest's record of the file");
        }
        tables++;
        bytes += size;
      } catch (CorruptionException e) {
        problems.add(e.getMessage());
      } finally {
        if (r != null) {
          r.release();
        }
      }
    }
    for (BlobFileMeta b : version.blobFiles().values()) {
      listed.add(b.number());
      Path p = FileNames.blob(dir, b.number());
      if (!Files.exists(p)) {
        problems.add(p + ": listed in the manifest but missing");
        continue;
      }
      long size = Files.size(p);
      if (size != b.fileSize()) {
        problems.add(p + ": " + size + " bytes, the manifest says " + b.fileSize());
        continue;
      }
      try (BlobFileReader r = BlobFileReader.open(p, b.number())) {
        long[] count = new long[1];
        r.forEachRecord(rec -> count[0]++);
        if (count[0] != b.totalCount()) {
          problems.add(p + ": " + count[0] + " records, the manifest says " + b.totalCount());
        }
        blocks += count[0];
        bytes += size;
      } catch (CorruptionException e) {
        problems.add(e.getMessage());
      }
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        long n = Math.max(FileNames.parseTable(name), FileNames.parseBlob(name));
        if (n >= 0 && !listed.contains(n)) {
          unreferenced.add(name);
        }
      }
    }
    blobs.close();
    return new Report(problems, tables, blocks, bytes, pointers, unreferenced);
  }

  /**
   * Reads every value {@code table} points to in a blob file (an exact read, as a point read does)
   * and checks it against the pointer's checksum; returns the number of pointers. Each blob file's
   * records have their own checksums, but only this finds a pointer into the wrong place or into a
   * file the manifest does not list.
   */
  private static long checkBlobPointers(
      TableReader table, Version version, BlobFiles blobs, List<String> problems) {
    long n = 0;
    InternalIterator it = table.iterator(Direction.FORWARD);
    try {
      for (it.seekToFirst(); it.valid(); it.next()) {
        if (it.kind() != ValueKind.BLOB_POINTER) {
          continue;
        }
        n++;
        BlobPointer ptr = BlobPointer.decode(it.value());
        String where =
            table.file()
                + ": key "
                + printable(it.userKey())
                + " (sequence "
                + it.sequence()
                + ") points to blob file "
                + ptr.fileNumber()
                + " at offset "
                + ptr.offset();
        if (!version.blobFiles().containsKey(ptr.fileNumber())) {
          problems.add(where + ", which the manifest does not list");
          continue;
        }
        try {
          blobs.read(ptr, io.shale.engine.io.FileReads.Cause.OTHER);
        } catch (CorruptionException | UncheckedIOException e) {
          problems.add(where + ": " + e.getMessage());
        }
      }
    } finally {
      it.close();
    }
    return n;
  }

  private static String printable(byte[] key) {
    String s = new String(key, StandardCharsets.UTF_8);
    return s.chars().allMatch(c -> c >= 0x20 && c < 0x7f)
        ? "\"" + s + "\""
        : HexFormat.of().formatHex(key);
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.out.println("usage: Verifier ENGINE_DIRECTORY");
      System.exit(2);
    }
    Report r = verify(Path.of(args[0]));
    System.out.printf(
        "checked %d tables, %d data blocks and blob records, %d bytes, %d blob " + "pointers%n",
        r.tables(), r.blocks(), r.bytes(), r.blobPointers());
    if (!r.unreferencedTables().isEmpty()) {
      System.out.println(
          "not in the manifest (left by a crash; removed at the next open): "
              + r.unreferencedTables());
    }
    for (String p : r.problems()) {
      System.out.println("CORRUPT: " + p);
    }
    System.out.println(r.problems().isEmpty() ? "OK" : r.problems().size() + " problem(s)");
    System.exit(r.problems().isEmpty() ? 0 : 1);
  }
}
