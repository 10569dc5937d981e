package io.shale.ops.seed;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.EngineStats;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.WriteBatch;
import io.shale.engine.io.FileReads;
import io.shale.engine.pressure.WriteThrottledException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * Shale's engine under the seed benchmark. Writes get consecutive indexes under one lock (as the
 * Raft log would give them); a write refused with {@link WriteThrottledException} is retried after
 * the hint it carries, and counted.
 */
final class ShaleSeedStore implements SeedStore {
  private final Engine engine;
  private final Gauge compactionsInProgress;
  private final Object writeOrder = new Object();
  private final LongAdder throttled = new LongAdder();
  private long index;

  ShaleSeedStore(Path dir, EngineOptions options) throws IOException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    this.engine = Engine.open(dir, options, registry);
    this.compactionsInProgress = registry.get("lsm.compactions.in_progress").gauge();
    this.index = engine.lastAppliedIndex();
  }

  private void write(WriteBatch batch) throws InterruptedException {
    while (true) {
      try {
        // Write pressure first, outside the ordering lock: a delayed writer must not hold up the
        // others (RocksDB's writers are delayed each on its own thread too).
        engine.admit(batch);
        synchronized (writeOrder) {
          engine.applyCommitted(batch, index + 1);
          index++;
        }
        return;
      } catch (WriteThrottledException e) {
        throttled.increment();
        Thread.sleep(Math.max(1, e.retryAfter().toMillis()));
      }
    }
  }

  @Override
  public void put(byte[] key, byte[] value) throws InterruptedException {
    // The workload makes a new array per value and never changes it.
    write(new WriteBatch().putWithoutCopy(key, value));
  }

  @Override
  public void delete(byte[] key) throws InterruptedException {
    write(new WriteBatch().delete(key));
  }

  @Override
  public void putAll(byte[][] keys, byte[][] values) throws InterruptedException {
    WriteBatch b = new WriteBatch();
    for (int i = 0; i < keys.length; i++) {
      b.putWithoutCopy(keys[i], values[i]);
    }
    write(b);
  }

  @Override
  public byte[] get(byte[] key) {
    return engine.get(key);
  }

  @Override
  public long scan(byte[] from, int n) {
    long bytes = 0;
    try (ScanIterator it = engine.scan(new ScanOptions(from, null, n, false, false))) {
      while (it.next()) {
        bytes += it.key().length + it.value().length;
      }
    }
    return bytes;
  }

  @Override
  public boolean compacting() {
    return compactionsInProgress.value() > 0;
  }

  @Override
  public int level0Files() {
    return engine.stats().levels().get(0).files();
  }

  @Override
  public Counters counters() {
    EngineStats s = engine.stats();
    long probes = 0;
    long passes = 0;
    for (EngineStats.LevelStats l : s.levels()) {
      probes += l.bloomChecks();
      passes += l.bloomChecks() - l.bloomUseful();
    }
    // File bytes, as RocksDB's COMPACT_WRITE_BYTES (compactionWritten() counts raw, uncompressed
    // key and value bytes), plus what collecting blob garbage wrote: values relocated (by
    // compactions and by blob GC) and the tables blob GC rewrote.
    return new Counters(
        s.compactionBytesWritten() + s.blobGcBytesWritten(),
        probes,
        passes,
        s.tableReaderMemoryBytes(),
        throttled.sum(),
        s.writeDelayNanos() / 1000,
        new FileReadBytes(
            s.fileReads().pointReads(),
            s.fileReads().scans(),
            s.fileReads().compactions() + s.fileReads().other()));
  }

  @Override
  public boolean settle(Duration max) throws InterruptedException {
    engine.flush();
    Thread waiter = new Thread(engine::awaitCompactions, "settle");
    waiter.setDaemon(true);
    waiter.start();
    waiter.join(max.toMillis());
    return !waiter.isAlive();
  }

  @Override
  public String shape() {
    EngineStats s = engine.stats();
    StringBuilder b = new StringBuilder();
    for (EngineStats.LevelStats l : s.levels()) {
      if (l.files() > 0) {
        b.append("L")
            .append(l.level())
            .append(' ')
            .append(l.files())
            .append(" files ")
            .append(l.bytes() >> 20)
            .append(" MiB, ");
      }
    }
    FileReads.Totals r = s.fileReads();
    return b.append(
            String.format(
                Locale.ROOT,
                "%d blob files (%d MiB live, %d MiB dead), %d compactions, %d blob GC runs;"
                    + " collecting blob garbage wrote %d MiB and reclaimed %d MiB; file reads since"
                    + " open (MiB, tables/blobs): gets %d/%d, scans %d/%d, compactions %d/%d,"
                    + " opening files %d/%d",
                s.blobFiles().size(),
                s.blobLiveBytes() >> 20,
                s.blobDeadBytes() >> 20,
                s.compactions(),
                s.blobGcRuns(),
                s.blobGcBytesWritten() >> 20,
                s.blobBytesReclaimed() >> 20,
                r.tablePointReads() >> 20,
                r.blobPointReads() >> 20,
                r.tableScans() >> 20,
                r.blobScans() >> 20,
                r.tableCompactions() >> 20,
                r.blobCompactions() >> 20,
                r.tableOther() >> 20,
                r.blobOther() >> 20))
        .toString();
  }

  @Override
  public void close() throws IOException {
    engine.close();
  }
}
