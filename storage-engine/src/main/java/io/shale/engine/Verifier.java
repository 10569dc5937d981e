package io.shale.engine;

import io.shale.engine.io.CorruptionException;
import io.shale.engine.sstable.BlockCache;
import io.shale.engine.sstable.TableReader;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks every checksum of an engine directory without modifying it: CURRENT, the manifest,
 * every block of every table the manifest lists (plus the table's properties against the
 * manifest's copy), and every record of every blob file it lists. Safe to run on a directory no engine has open; run from the command line as
 * {@code java -cp storage-engine.jar io.shale.engine.Verifier DIR}.
 */
public final class Verifier {
  private Verifier() {}

  /** What a verification found. An empty {@code problems} list means the directory is sound. */
  public record Report(List<String> problems, int tables, long blocks, long bytes,
      List<String> unreferencedTables) {}

  public static Report verify(Path dir) throws IOException {
    List<String> problems = new ArrayList<>();
    List<String> unreferenced = new ArrayList<>();
    List<FileMetadata> live;
    io.shale.engine.version.Version version;
    try {
      version = VersionSet.readVersion(dir, 64);
      live = version.allFiles();
    } catch (CorruptionException e) {
      problems.add(e.getMessage());
      return new Report(problems, 0, 0, 0, unreferenced);
    }
    int tables = 0;
    long blocks = 0;
    long bytes = 0;
    BlockCache noCache = new BlockCache(0);
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
        if (r.properties().entries() != f.properties().entries()
            || !java.util.Arrays.equals(r.properties().smallestKey(), f.smallestKey())
            || !java.util.Arrays.equals(r.properties().largestKey(), f.largestKey())) {
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
    for (io.shale.engine.version.BlobFileMeta b : version.blobFiles().values()) {
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
      try (io.shale.engine.blob.BlobFileReader r = io.shale.engine.blob.BlobFileReader.open(p,
          b.number())) {
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
    return new Report(problems, tables, blocks, bytes, unreferenced);
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: Verifier ENGINE_DIRECTORY");
      System.exit(2);
    }
    Report r = verify(Path.of(args[0]));
    System.out.printf("checked %d tables, %d data blocks and blob records, %d bytes%n", r.tables(), r.blocks(),
        r.bytes());
    if (!r.unreferencedTables().isEmpty()) {
      System.out.println("not in the manifest (left by a crash; removed at the next open): "
          + r.unreferencedTables());
    }
    for (String p : r.problems()) {
      System.out.println("CORRUPT: " + p);
    }
    System.out.println(r.problems().isEmpty() ? "OK" : r.problems().size() + " problem(s)");
    System.exit(r.problems().isEmpty() ? 0 : 1);
  }
}
