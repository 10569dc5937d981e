package io.shale.ops.seed;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;

/**
 * One engine under the seed benchmark: the operations the workload issues and the counters the
 * report needs, read the same way for Shale and RocksDB. Reads and writes may be called from many
 * threads.
 */
interface SeedStore extends AutoCloseable {
  /** Writes one key; a refused write (WriteThrottled) is retried after its hint and counted. */
  void put(byte[] key, byte[] value) throws Exception;

  void delete(byte[] key) throws Exception;

  /** Writes a batch of puts atomically (the load phase). */
  void putAll(byte[][] keys, byte[][] values) throws Exception;

  byte[] get(byte[] key) throws Exception;

  /** Reads up to {@code n} entries forward from {@code from}; returns the bytes read. */
  long scan(byte[] from, int n) throws Exception;

  /** True while at least one compaction job runs (the seed's lsm.compactions.in_progress > 0). */
  boolean compacting() throws Exception;

  int level0Files() throws Exception;

  Counters counters() throws Exception;

  /** Flushes memtables, then waits until no compaction runs or is due, at most {@code max}. */
  boolean settle(Duration max) throws Exception;

  /** Files per level and blob files, for the log. */
  String shape() throws Exception;

  @Override
  void close() throws Exception;

  /**
   * Counters since open.
   *
   * @param compactedBytes bytes written by compactions, blob files they wrote and blob garbage
   *     collection included (flushes excluded)
   * @param filterProbes table filters consulted by point reads
   * @param filterPasses probes whose filter let the read search the table ("tables touched")
   * @param filterIndexBytes memory the live tables' filters and indexes occupy
   * @param throttled writes refused with WriteThrottled (retried by the benchmark)
   * @param stallMicros time writes were held back (Shale: delays; RocksDB: stalls)
   */
  record Counters(
      long compactedBytes,
      long filterProbes,
      long filterPasses,
      long filterIndexBytes,
      long throttled,
      long stallMicros,
      FileReadBytes fileReads) {}

  /**
   * Bytes the engine read from its own files, by cause: gets, scans, and the rest (compactions,
   * blob GC, opening files). {@link #UNKNOWN} where the engine does not count them.
   */
  record FileReadBytes(long pointReads, long scans, long background) {
    static final FileReadBytes UNKNOWN = new FileReadBytes(-1, -1, -1);

    /** What was read between {@code earlier} and this; unknown if either is. */
    FileReadBytes since(FileReadBytes earlier) {
      if (pointReads < 0 || earlier.pointReads < 0) {
        return UNKNOWN;
      }
      return new FileReadBytes(
          pointReads - earlier.pointReads, scans - earlier.scans, background - earlier.background);
    }
  }

  /** Bytes of every file under {@code dir}; files deleted while it looks (compaction) count 0. */
  static long diskBytes(Path dir) throws IOException {
    long[] total = new long[1];
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            total[0] += attrs.isRegularFile() ? attrs.size() : 0;
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }
        });
    return total[0];
  }
}
