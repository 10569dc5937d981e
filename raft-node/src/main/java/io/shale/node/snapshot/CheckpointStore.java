package io.shale.node.snapshot;

import io.shale.engine.CheckpointInfo;
import io.shale.engine.Engine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

/**
 * The checkpoints of one node under {@code dataDir/checkpoints}, each named {@code
 * checkpoint-<term>-<index>}. The newest is kept; an older one is deleted as soon as no transfer
 * pins it. Each transfer has its own pin, named by a random token that only its requester learns,
 * so one transfer cannot use or release another's. A pin lapses after its lease without use, so a
 * follower that died mid-transfer does not keep files forever.
 *
 * <p>Thread-safe: Ratis takes snapshots on its apply thread while transfers run on gRPC threads.
 */
public final class CheckpointStore {
  /** A pin unused for this long is dropped (two minutes: far above one chunk's transfer time). */
  static final java.time.Duration DEFAULT_LEASE = java.time.Duration.ofSeconds(120);

  private final long leaseNanos;

  private final Path root;

  /** By index; the last entry is the newest checkpoint. */
  private final TreeMap<Long, Checkpoint> checkpoints = new TreeMap<>();

  /** One checkpoint directory, its files (lazily checksummed) and its pins. */
  public static final class Checkpoint {
    final long term;
    final long index;
    final Path dir;
    private List<FileEntry> files;

    Checkpoint(long term, long index, Path dir) {
      this.term = term;
      this.index = index;
      this.dir = dir;
    }

    public long term() {
      return term;
    }

    public long index() {
      return index;
    }

    public Path directory() {
      return dir;
    }
  }

  /**
   * A file of a checkpoint with its size and the SHA-256 of its whole contents: the file's identity
   * when a follower decides whether a file of the same name it holds is this one.
   */
  public record FileEntry(String name, long size, byte[] sha256) {}

  /** A transfer's pin on a checkpoint: {@code token} names it in Fetch and Release. */
  public record Transfer(long token, Checkpoint checkpoint) {}

  /** Pins by token, with when each was last used. */
  private final Map<Long, Transfer> transfers = new HashMap<>();

  private final Map<Long, Long> lastUse = new HashMap<>();
  private final SecureRandom tokens = new SecureRandom();

  public CheckpointStore(Path root) throws IOException {
    this(root, DEFAULT_LEASE);
  }

  /**
   * @param lease a transfer's pin lapses after this long unused ({@code raft.checkpoint_lease})
   */
  public CheckpointStore(Path root, java.time.Duration lease) throws IOException {
    this.leaseNanos = lease.toNanos();
    this.root = root;
    Files.createDirectories(root);
    // After a restart no transfer pins anything: keep only the newest complete checkpoint.
    try (Stream<Path> s = Files.list(root)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String name = p.getFileName().toString();
        String[] parts = name.split("-");
        if (parts.length == 3
            && parts[0].equals("checkpoint")
            && Files.exists(p.resolve("CURRENT"))) {
          long term = Long.parseLong(parts[1]);
          long index = Long.parseLong(parts[2]);
          checkpoints.put(index, new Checkpoint(term, index, p));
        } else {
          deleteTree(p); // an interrupted checkpoint
        }
      }
    }
    while (checkpoints.size() > 1) {
      deleteTree(checkpoints.pollFirstEntry().getValue().dir);
    }
  }

  /**
   * Checkpoints {@code engine} (flush, then hard links), unless the newest checkpoint already
   * reflects its persisted index, and drops older unpinned ones.
   *
   * @param termOf the term of an applied index
   * @return the newest checkpoint
   */
  public synchronized Checkpoint take(Engine engine, LongUnaryOperator termOf) throws IOException {
    engine.flush();
    return ofDurable(engine, termOf);
  }

  /**
   * As {@link #take}, but of what {@code engine} has already made durable, never waiting for a
   * flush: for Raft's applier thread, which a flush of a full memtable would stall. It asks for a
   * flush, so a later call finds a newer state; until then it returns the newest checkpoint.
   */
  public synchronized Checkpoint takeOfDurable(Engine engine, LongUnaryOperator termOf)
      throws IOException {
    engine.requestFlush();
    return ofDurable(engine, termOf);
  }

  private Checkpoint ofDurable(Engine engine, LongUnaryOperator termOf) throws IOException {
    long persisted = engine.persistedAppliedIndex();
    Map.Entry<Long, Checkpoint> newest = checkpoints.lastEntry();
    if (newest != null && newest.getKey() >= persisted) {
      return newest.getValue();
    }
    Path tmp = root.resolve("tmp-" + persisted);
    deleteTree(tmp);
    CheckpointInfo info = engine.checkpointOfDurable(tmp);
    long term = termOf.applyAsLong(info.appliedIndex());
    Path dir = root.resolve("checkpoint-" + term + "-" + info.appliedIndex());
    deleteTree(dir);
    Files.move(tmp, dir, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    Checkpoint c = new Checkpoint(term, info.appliedIndex(), dir);
    checkpoints.put(c.index, c);
    dropUnpinned();
    return c;
  }

  /** The newest checkpoint, or null before the first. */
  public synchronized Checkpoint newest() {
    Map.Entry<Long, Checkpoint> e = checkpoints.lastEntry();
    return e == null ? null : e.getValue();
  }

  /**
   * A new transfer of the newest checkpoint, pinned in the same step (a checkpoint taken between
   * looking it up and pinning it would otherwise drop it), or null before the first.
   */
  public synchronized Transfer pinNewest() {
    Checkpoint c = newest();
    if (c == null) {
      return null;
    }
    long token;
    do {
      token = tokens.nextLong();
    } while (token == 0 || transfers.containsKey(token));
    Transfer t = new Transfer(token, c);
    transfers.put(token, t);
    lastUse.put(token, System.nanoTime());
    return t;
  }

  /**
   * The checkpoint of transfer {@code token}, renewing its lease; null if there is no such
   * transfer, or its lease lapsed.
   */
  public synchronized Checkpoint use(long token) {
    Transfer t = transfers.get(token);
    if (t == null || System.nanoTime() - lastUse.get(token) >= leaseNanos) {
      return null;
    }
    lastUse.put(token, System.nanoTime());
    return t.checkpoint();
  }

  /** Ends transfer {@code token} (nothing if there is none). */
  public synchronized void release(long token) {
    transfers.remove(token);
    lastUse.remove(token);
    dropUnpinned();
  }

  /** The checkpoint's files with their checksums (computed once per checkpoint). */
  public List<FileEntry> files(Checkpoint c) throws IOException {
    synchronized (c) {
      if (c.files == null) {
        List<FileEntry> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(c.dir)) {
          for (Path p : (Iterable<Path>) s.sorted()::iterator) {
            out.add(new FileEntry(p.getFileName().toString(), Files.size(p), sha256(p)));
          }
        }
        c.files = List.copyOf(out);
      }
      return c.files;
    }
  }

  /** The number of checkpoint directories kept (for tests and status). */
  public synchronized int size() {
    return checkpoints.size();
  }

  /** Pins of live transfers. */
  public synchronized int transfers() {
    return transfers.size();
  }

  private void dropUnpinned() {
    long now = System.nanoTime();
    lastUse.entrySet().removeIf(e -> now - e.getValue() >= leaseNanos);
    transfers.keySet().retainAll(lastUse.keySet());
    Long newest = checkpoints.isEmpty() ? null : checkpoints.lastKey();
    Set<Long> leased = new HashSet<>();
    transfers.values().forEach(t -> leased.add(t.checkpoint().index));
    List<Long> drop = new ArrayList<>();
    for (Checkpoint c : checkpoints.values()) {
      if (c.index != newest && !leased.contains(c.index)) {
        drop.add(c.index);
      }
    }
    for (long i : drop) {
      try {
        deleteTree(checkpoints.remove(i).dir);
      } catch (IOException e) {
        throw new UncheckedIOException("deleting checkpoint " + i + " under " + root, e);
      }
    }
  }

  /**
   * The SHA-256 of a whole file. Not a CRC32C: the engine's files are sequences of records that
   * each end with their own CRC32C, and by the CRC's linearity such a file's whole-file CRC32C
   * depends on its record lengths, not their contents: two blob files of equal value lengths have
   * the same one (SnapshotFetcherTest).
   */
  public static byte[] sha256(Path file) throws IOException {
    MessageDigest sha = newSha256();
    byte[] buf = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buf)) > 0; ) {
        sha.update(buf, 0, n);
      }
    }
    return sha.digest();
  }

  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
