package io.shale.engine.metrics;

import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.TableLookup;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every cumulative count of an engine (flushes, compactions, bytes moved, blob GC, throttling,
 * Bloom probes), recorded in one call per event. Each call updates the engine's own count, which
 * {@code Engine.stats()} reports since open, and the matching Micrometer meter, which keeps
 * counting across reopens on the same registry. Nothing else records these quantities. Thread-safe;
 * the hot-path calls (Bloom probes) are an increment each.
 */
public final class EngineCounters implements TableLookup.Probes {
  /** Key, inline-value and blob bytes. */
  public record Bytes(long key, long value, long blob) {}

  private final EngineMetrics meters;
  private final LongAdder flushes = new LongAdder();
  private final LongAdder flushBytes = new LongAdder();
  private final LongAdder compactions = new LongAdder();
  private final LongAdder trivialMoves = new LongAdder();
  private final LongAdder compactionBytesRead = new LongAdder();
  private final LongAdder compactionBytesWritten = new LongAdder();
  private final LongAdder[] readSplit = adders(3);
  private final LongAdder[] writtenSplit = adders(3);
  private final LongAdder blobGcRuns = new LongAdder();
  private final LongAdder blobGcRelocatedBytes = new LongAdder();
  private final LongAdder blobGcBytesWritten = new LongAdder();
  private final LongAdder blobBytesReclaimed = new LongAdder();
  private final LongAdder writeDelayNanos = new LongAdder();
  private final LongAdder throttledWrites = new LongAdder();
  private final LongAdder[] bloomChecks;
  private final LongAdder[] bloomUseful;
  private final LongAdder[] bloomFalsePositives;

  public EngineCounters(EngineMetrics meters, int numLevels) {
    this.meters = meters;
    this.bloomChecks = adders(numLevels);
    this.bloomUseful = adders(numLevels);
    this.bloomFalsePositives = adders(numLevels);
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] a = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  /** A write was held back for {@code nanos} by write pressure. */
  public void writeDelayed(long nanos) {
    writeDelayNanos.add(nanos);
    meters.writeDelayed(nanos);
  }

  /** A write was refused at a stop threshold, for {@code cause}. */
  public void writeThrottled(String cause) {
    throttledWrites.increment();
    meters.writeThrottled(cause);
  }

  /** A flush wrote {@code bytes} of tables and blob files. */
  public void flushed(long bytes) {
    flushes.increment();
    flushBytes.add(bytes);
    meters.flushed(bytes);
  }

  /** A flush finished without writing a file (an empty memtable that only advanced the index). */
  public void emptyFlush() {
    flushes.increment();
  }

  /**
   * A compaction finished. A trivial move rewrites nothing, so only its count moves; otherwise the
   * key and value bytes of its input and output files are accounted by level and reason.
   */
  public void compacted(
      int level,
      String reason,
      boolean trivialMove,
      long bytesRead,
      long bytesWritten,
      List<FileMetadata> inputs,
      List<FileMetadata> outputs) {
    compactions.increment();
    if (trivialMove) {
      trivialMoves.increment();
    } else {
      accountBytes(inputs, outputs, level, reason, 0);
    }
    compactionBytesRead.add(bytesRead);
    compactionBytesWritten.add(bytesWritten);
    meters.compactionDone(level, reason);
  }

  /**
   * A blob GC job rewrote {@code outputs} from {@code inputs} and relocated blob bytes, writing
   * {@code bytesWritten} (tables and blob files), then dropped a blob file of {@code
   * reclaimedBytes}.
   */
  public void blobGcDone(
      long relocatedBytes,
      List<FileMetadata> inputs,
      List<FileMetadata> outputs,
      long bytesWritten,
      long reclaimedBytes) {
    blobGcRuns.increment();
    blobGcRelocatedBytes.add(relocatedBytes);
    blobGcBytesWritten.add(bytesWritten);
    blobBytesReclaimed.add(reclaimedBytes);
    meters.gcRelocated(relocatedBytes);
    meters.compactionDone(-1, "blob_gc");
    accountBytes(inputs, outputs, -1, "blob_gc", relocatedBytes);
  }

  /**
   * A compaction moved {@code relocatedBytes} of values out of blob files due for GC, and its edit
   * dropped blob files of {@code reclaimedBytes} that nothing pointed into any more.
   */
  public void blobsRelocatedInCompaction(long relocatedBytes, long reclaimedBytes) {
    blobGcRelocatedBytes.add(relocatedBytes);
    blobGcBytesWritten.add(relocatedBytes);
    blobBytesReclaimed.add(reclaimedBytes);
    meters.gcRelocated(relocatedBytes);
  }

  /**
   * Key, inline-value and blob bytes read and written, from the files' properties. Compactions move
   * pointers, so their blob bytes are 0; blob GC's are what it relocated.
   */
  private void accountBytes(
      List<FileMetadata> in, List<FileMetadata> out, int level, String reason, long blobBytes) {
    long keyIn = 0;
    long valueIn = 0;
    for (FileMetadata f : in) {
      keyIn += f.properties().rawKeyBytes();
      valueIn += f.properties().rawValueBytes();
    }
    long keyOut = 0;
    long valueOut = 0;
    for (FileMetadata f : out) {
      keyOut += f.properties().rawKeyBytes();
      valueOut += f.properties().rawValueBytes();
    }
    add(readSplit, keyIn, valueIn, blobBytes);
    add(writtenSplit, keyOut, valueOut, blobBytes);
    meters.compactionBytes("read", "key", level, reason, keyIn);
    meters.compactionBytes("read", "value", level, reason, valueIn);
    meters.compactionBytes("read", "blob", level, reason, blobBytes);
    meters.compactionBytes("written", "key", level, reason, keyOut);
    meters.compactionBytes("written", "value", level, reason, valueOut);
    meters.compactionBytes("written", "blob", level, reason, blobBytes);
  }

  private static void add(LongAdder[] split, long key, long value, long blob) {
    split[0].add(key);
    split[1].add(value);
    split[2].add(blob);
  }

  @Override
  public void bloomCheck(int level, boolean passed) {
    bloomChecks[level].increment();
    if (!passed) {
      bloomUseful[level].increment();
    }
    meters.bloomCheck(level, passed);
  }

  @Override
  public void bloomFalsePositive(int level) {
    bloomFalsePositives[level].increment();
    meters.bloomFalsePositive(level);
  }

  @Override
  public void tablesTouched(int n) {
    meters.tablesTouched(n);
  }

  public long flushes() {
    return flushes.sum();
  }

  public long flushBytes() {
    return flushBytes.sum();
  }

  public long compactions() {
    return compactions.sum();
  }

  public long trivialMoves() {
    return trivialMoves.sum();
  }

  public long compactionBytesRead() {
    return compactionBytesRead.sum();
  }

  public long compactionBytesWritten() {
    return compactionBytesWritten.sum();
  }

  public Bytes compactionRead() {
    return new Bytes(readSplit[0].sum(), readSplit[1].sum(), readSplit[2].sum());
  }

  public Bytes compactionWritten() {
    return new Bytes(writtenSplit[0].sum(), writtenSplit[1].sum(), writtenSplit[2].sum());
  }

  public long blobGcRuns() {
    return blobGcRuns.sum();
  }

  public long blobGcRelocatedBytes() {
    return blobGcRelocatedBytes.sum();
  }

  /** Bytes written to collect blob garbage: relocated values, and tables rewritten by blob GC. */
  public long blobGcBytesWritten() {
    return blobGcBytesWritten.sum();
  }

  /** Bytes of blob files dropped because nothing pointed into them any more. */
  public long blobBytesReclaimed() {
    return blobBytesReclaimed.sum();
  }

  public long writeDelayNanos() {
    return writeDelayNanos.sum();
  }

  public long throttledWrites() {
    return throttledWrites.sum();
  }

  public long bloomChecks(int level) {
    return bloomChecks[level].sum();
  }

  public long bloomUseful(int level) {
    return bloomUseful[level].sum();
  }

  public long bloomFalsePositives(int level) {
    return bloomFalsePositives[level].sum();
  }
}
