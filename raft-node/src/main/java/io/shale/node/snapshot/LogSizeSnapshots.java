package io.shale.node.snapshot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.engine.concurrent.DaemonThreads;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a snapshot when the Raft log segments on disk that a purge may remove exceed {@code
 * maxLogBytes}, so that Ratis purges them. A purge keeps the last {@code keepEntries} entries
 * ({@code raft.log_keep_entries}), so the segments holding them do not count: they would never
 * bring the log under the bound, and a snapshot would be taken every period for nothing. Ratis
 * triggers snapshots by entry count only, and entries range from a few bytes to 17 MiB; without a
 * byte bound the log grows with the data, and a restart reads all of it again although the engine
 * holds every entry in it (RestartIT's 1 GiB form: 4 s of a 12 s start).
 *
 * <p>Each node decides for itself, as with Ratis's own trigger: a snapshot is local (an engine
 * checkpoint) and changes no replicated state. One request at a time; none while nothing was
 * applied since the last unless that one stopped short ({@link AskRule}), and none before {@code
 * minEntries} entries past the last snapshot: a purge needs the snapshot to move the purge gap past
 * the last one, and a snapshot the log is not purged up to would be taken again every period, each
 * one a flush.
 */
public final class LogSizeSnapshots implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LogSizeSnapshots.class);
  private static final long CHECK_EVERY_MS = 1_000;

  private final RaftServer server;
  private final RaftGroupId group;
  private final Path logDir;
  private final long maxLogBytes;
  private final long minEntries;
  private final long keepEntries;
  private final Duration timeout;
  private final LongSupplier appliedIndex;
  private final Counter taken;
  private final ClientId clientId = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();
  private final ScheduledExecutorService timer;
  private final ScheduledFuture<?> checks;

  private final AskRule rule;

  /**
   * When to ask for a snapshot: when the log is over its bound and either something was applied
   * since the last request (an idle node does not ask again and again) or the last snapshot stopped
   * short of what was applied then. A snapshot covers only what the engine has flushed (it asks for
   * a flush rather than waiting for one), so the one taken after the last write of a burst may
   * leave entries behind that no later write would ask for; they must be at least the purge gap,
   * else Ratis would not take another.
   */
  static final class AskRule {
    private final long maxLogBytes;
    private final long minEntries;

    /** The applied index at the last request. */
    private long askedAt = -1;

    /** The index of the last snapshot taken. */
    private long lastTaken = -1;

    AskRule(long maxLogBytes, long minEntries) {
      this.maxLogBytes = maxLogBytes;
      this.minEntries = minEntries;
    }

    /** Whether to ask now, with {@code bytes} of purgeable log and {@code applied} applied. */
    boolean due(long bytes, long applied) {
      if (bytes <= maxLogBytes) {
        return false;
      }
      boolean stoppedShort = lastTaken < askedAt && applied - lastTaken >= minEntries;
      return applied > askedAt || stoppedShort;
    }

    /** A request made at {@code applied}; {@code taken} is its snapshot's index, if it took one. */
    void asked(long applied, long taken) {
      askedAt = applied;
      lastTaken = Math.max(lastTaken, taken);
    }

    long lastTaken() {
      return lastTaken;
    }
  }

  /**
   * @param logDir where Ratis keeps the group's log segments ({@code
   *     RaftStorageDirectory.getCurrentDir()})
   * @param maxLogBytes segment bytes beyond which a snapshot is taken
   * @param minEntries entries past the last snapshot before another (the purge gap)
   * @param keepEntries entries a purge leaves before the snapshot
   * @param timeout how long one snapshot request may take
   */
  public LogSizeSnapshots(
      RaftServer server,
      RaftGroupId group,
      Path logDir,
      long maxLogBytes,
      long minEntries,
      long keepEntries,
      Duration timeout,
      LongSupplier appliedIndex,
      MeterRegistry registry) {
    this.server = server;
    this.group = group;
    this.logDir = logDir;
    this.maxLogBytes = maxLogBytes;
    this.minEntries = Math.max(1, minEntries);
    this.rule = new AskRule(maxLogBytes, this.minEntries);
    this.keepEntries = Math.max(0, keepEntries);
    this.timeout = timeout;
    this.appliedIndex = appliedIndex;
    this.taken = registry.counter("shale.snapshot.by.log.size");
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named(server.getId() + "-log-size-snapshots"));
    checks =
        timer.scheduleWithFixedDelay(
            this::check, CHECK_EVERY_MS, CHECK_EVERY_MS, TimeUnit.MILLISECONDS);
  }

  /** Bytes of the Raft log segments in {@code dir} (closed and in progress). */
  static long logBytes(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(f -> f.getFileName().toString().startsWith("log_"))
          .mapToLong(LogSizeSnapshots::sizeOrZero)
          .sum();
    }
  }

  /**
   * Bytes of the closed segments in {@code dir} that end at or before {@code upTo} (named {@code
   * log_<first>-<last>} by Ratis): those a snapshot at or after {@code upTo} lets a purge remove.
   */
  static long purgeableBytes(Path dir, long upTo) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(f -> closedSegmentEnd(f.getFileName().toString()) <= upTo)
          .mapToLong(LogSizeSnapshots::sizeOrZero)
          .sum();
    }
  }

  /** The last index of a closed segment named {@code log_<first>-<last>}, else Long.MAX_VALUE. */
  static long closedSegmentEnd(String name) {
    int dash = name.indexOf('-');
    if (!name.startsWith("log_") || dash < 0) {
      return Long.MAX_VALUE;
    }
    try {
      return Long.parseLong(name.substring(dash + 1));
    } catch (NumberFormatException notASegment) {
      return Long.MAX_VALUE;
    }
  }

  private static long sizeOrZero(Path f) {
    try {
      return Files.size(f);
    } catch (java.nio.file.NoSuchFileException purged) {
      return 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void check() {
    try {
      long applied = appliedIndex.getAsLong();
      long bytes = purgeableBytes(logDir, applied - keepEntries);
      if (!rule.due(bytes, applied)) {
        return;
      }
      rule.asked(applied, -1); // a failed request counts as one that stopped short
      RaftClientReply r =
          server
              .snapshotManagementAsync(
                  SnapshotManagementRequest.newCreate(
                      clientId,
                      server.getId(),
                      group,
                      callIds.incrementAndGet(),
                      timeout.toMillis(),
                      minEntries))
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (r.isSuccess() && r.getLogIndex() > rule.lastTaken()) {
        rule.asked(applied, r.getLogIndex());
        taken.increment();
        LOG.info(
            "snapshot at index {}: the Raft log held {} MiB a purge may remove (limit {} MiB)",
            r.getLogIndex(),
            bytes >> 20,
            maxLogBytes >> 20);
      } else if (!r.isSuccess()) {
        LOG.debug("snapshot for log size not taken: {}", r.getException());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) { // keep checking: the next period may succeed
      LOG.warn("snapshot for log size failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    checks.cancel(false);
    timer.shutdownNow();
  }
}
