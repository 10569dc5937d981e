package io.shale.ops.seed;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * What one configuration's run measured; the child process writes it as a properties file and the
 * report reads it back. Times in microseconds, sizes in bytes; "mixed" figures cover the timed
 * mixed phase only, write amplification covers load and mixed phases. Burst figures are 0 without a
 * burst writer ({@link BurstSettings}). The engine's own file reads by cause ({@code fileRead*})
 * are -1 where the engine does not count them (RocksDB here).
 */
public record RunResult(
    String config,
    long keys,
    long loadBytes,
    double loadSeconds,
    boolean settled,
    double settleSeconds,
    double mixedSeconds,
    long ops,
    long reads,
    long readMisses,
    long scans,
    long writes,
    double readP50Us,
    double readP99Us,
    double readP999Us,
    double readP99OutsideCompactionUs,
    double readP99DuringCompactionUs,
    long readsDuringCompaction,
    double scanP99Us,
    double writeP99Us,
    double compactionShare,
    long compactionIntervals,
    long compactedBytes,
    long filterIndexBytes,
    long throttled,
    long stallMicros,
    long userBytesWritten,
    long diskBytesWritten,
    long diskBytesReadMixed,
    long fileReadPointMixed,
    long fileReadScanMixed,
    long fileReadBackgroundMixed,
    long diskBytes,
    long liveBytes,
    double hotTablesTouched,
    double hotTablesProbed,
    double allTablesTouched,
    long valuesChecked,
    long residentBytes,
    long memoryLimit,
    long memoryPeak,
    double readP99InBurstUs,
    long readsInBurst,
    long burstBytes,
    double burstWriteP99Us,
    long secondsWithoutOps,
    long gcMillis,
    double readP999OutsideCompactionUs,
    double readP999DuringCompactionUs,
    double readMaxUs) {

  public double throughput() {
    return ops / mixedSeconds;
  }

  /** Bytes compacted per hour at the mixed phase's rate. */
  public double compactedPerHour() {
    return compactedBytes * 3600.0 / mixedSeconds;
  }

  public double writeAmplification() {
    return (double) diskBytesWritten / userBytesWritten;
  }

  public double spaceAmplification() {
    return (double) diskBytes / liveBytes;
  }

  public RunResult withMemory(long limit, long peak) {
    return new RunResult(
        config,
        keys,
        loadBytes,
        loadSeconds,
        settled,
        settleSeconds,
        mixedSeconds,
        ops,
        reads,
        readMisses,
        scans,
        writes,
        readP50Us,
        readP99Us,
        readP999Us,
        readP99OutsideCompactionUs,
        readP99DuringCompactionUs,
        readsDuringCompaction,
        scanP99Us,
        writeP99Us,
        compactionShare,
        compactionIntervals,
        compactedBytes,
        filterIndexBytes,
        throttled,
        stallMicros,
        userBytesWritten,
        diskBytesWritten,
        diskBytesReadMixed,
        fileReadPointMixed,
        fileReadScanMixed,
        fileReadBackgroundMixed,
        diskBytes,
        liveBytes,
        hotTablesTouched,
        hotTablesProbed,
        allTablesTouched,
        valuesChecked,
        residentBytes,
        limit,
        peak,
        readP99InBurstUs,
        readsInBurst,
        burstBytes,
        burstWriteP99Us,
        secondsWithoutOps,
        gcMillis,
        readP999OutsideCompactionUs,
        readP999DuringCompactionUs,
        readMaxUs);
  }

  void write(Path file) throws IOException {
    Properties p = new Properties();
    try {
      for (RecordComponent c : RunResult.class.getRecordComponents()) {
        p.setProperty(c.getName(), String.valueOf(c.getAccessor().invoke(this)));
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, "seed benchmark result of one configuration");
    }
  }

  static RunResult read(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    RecordComponent[] cs = RunResult.class.getRecordComponents();
    Object[] values = new Object[cs.length];
    Class<?>[] types = new Class<?>[cs.length];
    for (int i = 0; i < cs.length; i++) {
      String s = p.getProperty(cs[i].getName());
      if (s == null) {
        throw new IOException(file + ": missing " + cs[i].getName());
      }
      types[i] = cs[i].getType();
      values[i] =
          types[i] == long.class
              ? Long.parseLong(s)
              : types[i] == double.class
                  ? Double.parseDouble(s)
                  : types[i] == boolean.class ? Boolean.parseBoolean(s) : s;
    }
    try {
      return RunResult.class.getDeclaredConstructor(types).newInstance(values);
    } catch (ReflectiveOperationException e) {
      throw new IOException(file + ": " + e, e);
    }
  }
}
