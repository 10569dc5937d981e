package io.shale.engine.version;

import io.shale.engine.io.Checksums;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.io.RecordLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The current version, the manifest that makes it durable, and the reference counts that decide
 * when a table file may be deleted.
 *
 * <p>Thread-safety: {@link #logAndApply} and file-number allocation may be called from any thread
 * (they serialise on this object); {@link #acquireCurrent} is lock-free.
 */
public final class VersionSet implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VersionSet.class);
  static final long MANIFEST_MAGIC = 0x5348414c454d414eL; // "SHALEMAN"
  static final int MANIFEST_VERSION = 1;
  private static final long MANIFEST_ROLL_BYTES = 16L << 20;

  private final Path dir;
  private final int numLevels;
  private final LongConsumer deleteFile;
  private final LongConsumer deleteBlob;
  private final Map<Long, Integer> fileRefs = new HashMap<>();
  private final Map<Long, FileMetadata> liveFiles = new HashMap<>();
  private final Map<Long, BlobFileMeta> liveBlobs = new HashMap<>();
  private volatile Version current;
  private volatile long persistedAppliedIndex;
  private long nextFileNumber;
  private RecordLog.Writer manifest;
  private long manifestBytes;

  /** Points CURRENT at a manifest; tests inject failures after the rename through it. */
  @FunctionalInterface
  interface CurrentWriter {
    void write(Path dir, String manifestName) throws IOException;
  }

  private final CurrentWriter currentWriter;

  private VersionSet(
      Path dir,
      int numLevels,
      LongConsumer deleteFile,
      LongConsumer deleteBlob,
      CurrentWriter currentWriter) {
    this.dir = dir;
    this.numLevels = numLevels;
    this.deleteFile = deleteFile;
    this.deleteBlob = deleteBlob;
    this.currentWriter = currentWriter;
  }

  /**
   * Recover the last durable version of {@code dir} (or start an empty one), then start a fresh
   * manifest holding it and delete files no version references (leftovers of a crash).
   *
   * @param deleteFile called with the number of each table file once no live version lists it
   * @param deleteBlob the same for blob files
   */
  public static VersionSet open(
      Path dir, int numLevels, LongConsumer deleteFile, LongConsumer deleteBlob)
      throws IOException {
    return open(dir, numLevels, deleteFile, deleteBlob, VersionSet::writeCurrent);
  }

  static VersionSet open(
      Path dir,
      int numLevels,
      LongConsumer deleteFile,
      LongConsumer deleteBlob,
      CurrentWriter currentWriter)
      throws IOException {
    VersionSet vs = new VersionSet(dir, numLevels, deleteFile, deleteBlob, currentWriter);
    vs.recover();
    return vs;
  }

  private void recover() throws IOException {
    Path currentFile = dir.resolve(FileNames.CURRENT);
    Version v = Version.empty(numLevels, this);
    long applied = -1;
    long next = 1;
    if (Files.exists(currentFile)) {
      Path manifestFile = dir.resolve(readCurrent(currentFile));
      if (!Files.exists(manifestFile)) {
        throw new CorruptionException(
            currentFile, 0, "names missing manifest " + manifestFile.getFileName());
      }
      RecordLog.Contents contents = RecordLog.read(manifestFile, MANIFEST_MAGIC, MANIFEST_VERSION);
      for (int i = 0; i < contents.records().size(); i++) {
        long offset = contents.offsets().get(i);
        try {
          VersionEdit edit = VersionEdit.decode(contents.records().get(i));
          v = v.apply(edit, this);
          if (edit.persistedAppliedIndex() >= 0) {
            applied = edit.persistedAppliedIndex();
          }
          if (edit.nextFileNumber() >= 0) {
            next = Math.max(next, edit.nextFileNumber());
          }
        } catch (IllegalStateException e) {
          throw new CorruptionException(
              manifestFile, offset, "bad version edit: " + e.getMessage());
        }
      }
      for (FileMetadata f : v.allFiles()) {
        Path p = FileNames.table(dir, f.number());
        if (!Files.exists(p)) {
          throw new CorruptionException(
              p, 0, "table listed in " + manifestFile.getFileName() + " is missing");
        }
        long size = Files.size(p);
        if (size != f.size()) {
          throw new CorruptionException(
              p,
              Math.min(size, f.size()),
              "table has " + size + " bytes, manifest says " + f.size());
        }
        next = Math.max(next, f.number() + 1);
      }
      for (BlobFileMeta b : v.blobFiles().values()) {
        Path p = FileNames.blob(dir, b.number());
        if (!Files.exists(p)) {
          throw new CorruptionException(
              p, 0, "blob file listed in " + manifestFile.getFileName() + " is missing");
        }
        long size = Files.size(p);
        if (size != b.fileSize()) {
          throw new CorruptionException(
              p,
              Math.min(size, b.fileSize()),
              "blob file has " + size + " bytes, manifest says " + b.fileSize());
        }
        next = Math.max(next, b.number() + 1);
      }
    } else if (hasTables()) {
      throw new CorruptionException(
          currentFile, 0, "CURRENT is missing but the directory holds tables");
    }
    this.persistedAppliedIndex = applied;
    this.nextFileNumber = Math.max(next, largestManifestNumber() + 1);
    install(v);
    startNewManifest();
    removeUnreferencedFiles();
  }

  /**
   * The largest manifest number in the directory. A crash between creating a manifest and switching
   * CURRENT to it leaves a manifest no edit accounts for; its number must not be reused.
   */
  private long largestManifestNumber() throws IOException {
    long max = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        max = Math.max(max, FileNames.parseManifest(p.getFileName().toString()));
      }
    }
    return max;
  }

  private boolean hasTables() throws IOException {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String n = p.getFileName().toString();
        if (FileNames.parseTable(n) >= 0 || FileNames.parseBlob(n) >= 0) {
          return true;
        }
      }
    }
    return false;
  }

  static String readCurrent(Path currentFile) throws IOException {
    String s = new String(Files.readAllBytes(currentFile), StandardCharsets.ISO_8859_1);
    int sp = s.indexOf(' ');
    if (sp < 0 || !s.endsWith("\n")) {
      throw new CorruptionException(currentFile, 0, "malformed CURRENT file");
    }
    String name = s.substring(0, sp);
    String crc = s.substring(sp + 1, s.length() - 1);
    byte[] nameBytes = name.getBytes(StandardCharsets.ISO_8859_1);
    String expected = String.format("%08x", Checksums.crc32c(nameBytes, 0, nameBytes.length));
    if (!crc.equals(expected) || FileNames.parseManifest(name) < 0) {
      throw new CorruptionException(
          currentFile, 0, "CURRENT checksum mismatch or bad manifest name");
    }
    return name;
  }

  static void writeCurrent(Path dir, String manifestName) throws IOException {
    byte[] nameBytes = manifestName.getBytes(StandardCharsets.ISO_8859_1);
    String content =
        manifestName
            + " "
            + String.format("%08x", Checksums.crc32c(nameBytes, 0, nameBytes.length))
            + "\n";
    DurableFiles.replaceAtomically(
        dir.resolve(FileNames.CURRENT), content.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** An edit that recreates {@code v} from nothing: the first record of every manifest. */
  private static VersionEdit snapshotEdit(Version v, long applied, long nextFile) {
    List<VersionEdit.Added> added = new ArrayList<>();
    for (int l = 0; l < v.numLevels(); l++) {
      for (FileMetadata f : v.files(l)) {
        added.add(new VersionEdit.Added(l, f));
      }
    }
    return new VersionEdit(added, List.of(), applied, nextFile)
        .withBlobs(List.copyOf(v.blobFiles().values()), List.of(), List.of());
  }

  private void startNewManifest() throws IOException {
    long number = nextFileNumber++;
    String name = FileNames.manifestName(number);
    RecordLog.Writer w =
        RecordLog.Writer.create(dir.resolve(name), MANIFEST_MAGIC, MANIFEST_VERSION);
    try {
      byte[] rec = snapshotEdit(current, persistedAppliedIndex, nextFileNumber).encode();
      w.append(rec);
      currentWriter.write(dir, name);
    } catch (IOException | RuntimeException e) {
      if (!name.equals(currentName())) {
        w.close();
        Files.deleteIfExists(w.file());
        throw e;
      }
      // CURRENT was renamed but not made durable (the directory fsync failed): it names the new
      // manifest now, and a crash may bring back the old name. Keep both files, and write later
      // edits where CURRENT points; the next open removes the one it does not name
      // (VersionSetRecoveryTest).
      switchTo(w, false);
      throw e;
    }
    switchTo(w, true);
  }

  /** Makes {@code w} the manifest edits go to; closes the old one and maybe deletes it. */
  private void switchTo(RecordLog.Writer w, boolean deleteOld) throws IOException {
    RecordLog.Writer old = manifest;
    manifest = w;
    manifestBytes = 0;
    if (old != null) {
      old.close();
      if (deleteOld) {
        Files.deleteIfExists(old.file());
      }
    }
  }

  /** The manifest CURRENT names now, or null if it cannot be read. */
  private String currentName() {
    try {
      return readCurrent(dir.resolve(FileNames.CURRENT));
    } catch (IOException | RuntimeException unreadable) {
      return null;
    }
  }

  private void removeUnreferencedFiles() throws IOException {
    String liveManifest = manifest.file().getFileName().toString();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        long table = FileNames.parseTable(name);
        long blob = FileNames.parseBlob(name);
        boolean orphanTable =
            table >= 0 && !fileRefs.containsKey(table) || blob >= 0 && !fileRefs.containsKey(blob);
        boolean staleManifest = FileNames.parseManifest(name) >= 0 && !name.equals(liveManifest);
        if (orphanTable || staleManifest || name.endsWith(".tmp")) {
          Files.deleteIfExists(p);
        }
      }
    }
    DurableFiles.syncDirectory(dir);
  }

  /** Make {@code v} current; the previous current version loses the set's reference. */
  private void install(Version v) {
    synchronized (this) {
      for (int l = 0; l < v.numLevels(); l++) {
        for (FileMetadata f : v.files(l)) {
          fileRefs.merge(f.number(), 1, Integer::sum);
          liveFiles.put(f.number(), f);
        }
      }
      for (BlobFileMeta b : v.blobFiles().values()) {
        fileRefs.merge(b.number(), 1, Integer::sum);
        liveBlobs.put(b.number(), b);
      }
    }
    Version old = current;
    current = v;
    if (old != null) {
      old.release();
    }
  }

  /** Called by a version whose last reference went: its files lose one reference each. */
  void versionDied(Version v) {
    List<Long> dead = new ArrayList<>();
    List<Long> deadBlobs = new ArrayList<>();
    synchronized (this) {
      for (BlobFileMeta b : v.blobFiles().values()) {
        int r = fileRefs.merge(b.number(), -1, Integer::sum);
        if (r == 0) {
          fileRefs.remove(b.number());
          liveBlobs.remove(b.number());
          deadBlobs.add(b.number());
        }
      }
      for (int l = 0; l < v.numLevels(); l++) {
        for (FileMetadata f : v.files(l)) {
          int r = fileRefs.merge(f.number(), -1, Integer::sum);
          if (r == 0) {
            fileRefs.remove(f.number());
            liveFiles.remove(f.number());
            dead.add(f.number());
          }
        }
      }
    }
    for (long n : dead) {
      deleteFile.accept(n);
    }
    for (long n : deadBlobs) {
      deleteBlob.accept(n);
    }
  }

  /** The current version with a reference taken; the caller must release it. */
  public Version acquireCurrent() {
    while (true) {
      Version v = current;
      if (v.tryRetain()) {
        return v;
      }
    }
  }

  /** The current version without a reference (for decisions made under the engine's locks). */
  public Version current() {
    return current;
  }

  public synchronized long newFileNumber() {
    return nextFileNumber++;
  }

  public long persistedAppliedIndex() {
    return persistedAppliedIndex;
  }

  /**
   * Append {@code edit} to the manifest (fsynced), then install the version it produces. If the
   * append fails the current version is unchanged and the exception propagates. A blob file the
   * edit's garbage empties is removed by the same record; returns the edit as recorded.
   */
  public synchronized VersionEdit logAndApply(VersionEdit edit) throws IOException {
    List<Long> emptied = current.blobFilesEmptiedBy(edit);
    if (!emptied.isEmpty()) {
      List<Long> gone = new ArrayList<>(edit.blobsRemoved());
      gone.addAll(emptied);
      edit = edit.withBlobs(edit.blobsAdded(), edit.blobGarbage(), gone);
    }
    Version next = current.apply(edit, this);
    long applied = Math.max(persistedAppliedIndex, edit.persistedAppliedIndex());
    VersionEdit recorded = edit.withAppliedIndex(applied, nextFileNumber);
    byte[] rec = recorded.encode();
    manifest.append(rec);
    manifestBytes += rec.length;
    persistedAppliedIndex = applied;
    install(next);
    if (manifestBytes > MANIFEST_ROLL_BYTES) {
      try {
        startNewManifest();
      } catch (IOException e) {
        // The edit is durable in the current manifest; rolling is retried after the next edit.
        LOG.warn("could not start a new manifest in {}: {}", dir, e.toString());
      }
    }
    return recorded;
  }

  /** A retained version with the applied index and next file number recorded alongside it. */
  public record Pinned(Version version, long appliedIndex, long nextFileNumber) {}

  /** The current version, retained, read atomically with its applied index. */
  public synchronized Pinned pinCurrent() {
    return new Pinned(acquireCurrent(), persistedAppliedIndex, nextFileNumber);
  }

  /** Bytes of table files that only old versions (readers, snapshots) still hold. */
  public synchronized long pinnedObsoleteBytes() {
    Version v = current;
    java.util.Set<Long> inCurrent = new java.util.HashSet<>();
    v.allFiles().forEach(f -> inCurrent.add(f.number()));
    long sum = 0;
    for (FileMetadata f : liveFiles.values()) {
      if (!inCurrent.contains(f.number())) {
        sum += f.size();
      }
    }
    for (BlobFileMeta b : liveBlobs.values()) {
      if (!v.blobFiles().containsKey(b.number())) {
        sum += b.fileSize();
      }
    }
    return sum;
  }

  /**
   * Write a manifest and CURRENT describing {@code v} at {@code appliedIndex} into {@code target}.
   */
  public static void writeStandaloneManifest(
      Path target, Version v, long appliedIndex, long nextFile) throws IOException {
    String name = FileNames.manifestName(nextFile);
    try (RecordLog.Writer w =
        RecordLog.Writer.create(target.resolve(name), MANIFEST_MAGIC, MANIFEST_VERSION)) {
      w.append(snapshotEdit(v, appliedIndex, nextFile + 1).encode());
    }
    writeCurrent(target, name);
  }

  /** The name of the manifest CURRENT points to in {@code dir} (verified). */
  public static String currentManifestName(Path dir) throws IOException {
    return readCurrent(dir.resolve(FileNames.CURRENT));
  }

  /**
   * Replay the manifest CURRENT names, without changing anything in {@code dir}, and return the
   * files of the version it describes. For the verifier.
   */
  public static List<FileMetadata> readLiveFiles(Path dir, int numLevels) throws IOException {
    return readVersion(dir, numLevels).allFiles();
  }

  /** Like {@link #readLiveFiles}, the whole version (tables and blob files). */
  public static Version readVersion(Path dir, int numLevels) throws IOException {
    Path currentFile = dir.resolve(FileNames.CURRENT);
    Path manifestFile = dir.resolve(readCurrent(currentFile));
    if (!Files.exists(manifestFile)) {
      throw new CorruptionException(
          currentFile, 0, "names missing manifest " + manifestFile.getFileName());
    }
    RecordLog.Contents c = RecordLog.read(manifestFile, MANIFEST_MAGIC, MANIFEST_VERSION);
    Version v = Version.empty(numLevels, null);
    for (int i = 0; i < c.records().size(); i++) {
      try {
        v = v.apply(VersionEdit.decode(c.records().get(i)), null);
      } catch (IllegalStateException e) {
        throw new CorruptionException(
            manifestFile, c.offsets().get(i), "bad version edit: " + e.getMessage());
      }
    }
    return v;
  }

  @Override
  public synchronized void close() throws IOException {
    if (manifest != null) {
      manifest.close();
    }
  }
}
