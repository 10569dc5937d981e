package io.shale.ops.seed;

import java.nio.file.Path;
import java.time.Duration;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Statistics;
import org.rocksdb.TableProperties;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB (rocksdbjni) configured like Shale's seed settings: blob files for values of 8 KiB and
 * more with blob garbage collection forced at 50% garbage, 10 bits/key Bloom filters on every
 * level, level-0 slowdown/stop at 20/36 files, pending-compaction limits 64/256 GiB, the same
 * memtable, level and file sizes and block cache size, LZ4, no write-ahead log. RocksDB stalls a
 * write instead of refusing it, so its throttled count is 0 and its stall time is reported.
 */
final class RocksSeedStore implements SeedStore {
  static {
    RocksDB.loadLibrary();
  }

  private final LRUCache cache;
  private final BloomFilter filter;
  private final Statistics statistics;
  private final Options options;
  private final WriteOptions writeOptions;
  private final ReadOptions readOptions;
  private final RocksDB db;

  RocksSeedStore(Path dir, BenchScale scale) throws RocksDBException {
    cache = new LRUCache(scale.blockCacheBytes());
    filter = new BloomFilter(10, false);
    statistics = new Statistics();
    BlockBasedTableConfig table =
        new BlockBasedTableConfig()
            .setBlockSize(4096)
            .setBlockRestartInterval(16)
            .setBlockCache(cache)
            .setFilterPolicy(filter);
    options =
        new Options()
            .setCreateIfMissing(true)
            .setStatistics(statistics)
            .setWriteBufferSize(scale.memtableBytes())
            .setMaxWriteBufferNumber(1 + 4) // Shale: max_immutable_memtables = 4
            .setLevel0FileNumCompactionTrigger(4)
            .setLevel0SlowdownWritesTrigger(20)
            .setLevel0StopWritesTrigger(36)
            .setSoftPendingCompactionBytesLimit(64L << 30)
            .setHardPendingCompactionBytesLimit(256L << 30)
            .setMaxBytesForLevelBase(scale.levelBaseBytes())
            .setMaxBytesForLevelMultiplier(10)
            .setLevelCompactionDynamicLevelBytes(false)
            .setTargetFileSizeBase(scale.targetFileBytes())
            .setNumLevels(7)
            .setMaxBackgroundJobs(
                2) // one flush and one compaction, as Shale's one compaction thread
            .setMaxSubcompactions(1)
            .setMaxOpenFiles(1000)
            .setCompressionType(CompressionType.LZ4_COMPRESSION)
            .setEnableBlobFiles(true)
            .setMinBlobSize(8192)
            .setBlobFileSize(scale.blobFileBytes())
            .setEnableBlobGarbageCollection(true)
            .setBlobGarbageCollectionForceThreshold(0.5)
            .setTableFormatConfig(table);
    writeOptions = new WriteOptions().setDisableWAL(true);
    readOptions = new ReadOptions();
    db = RocksDB.open(options, dir.toString());
  }

  @Override
  public void put(byte[] key, byte[] value) throws RocksDBException {
    db.put(writeOptions, key, value);
  }

  @Override
  public void delete(byte[] key) throws RocksDBException {
    db.delete(writeOptions, key);
  }

  @Override
  public void putAll(byte[][] keys, byte[][] values) throws RocksDBException {
    try (WriteBatch b = new WriteBatch()) {
      for (int i = 0; i < keys.length; i++) {
        b.put(keys[i], values[i]);
      }
      db.write(writeOptions, b);
    }
  }

  @Override
  public byte[] get(byte[] key) throws RocksDBException {
    return db.get(readOptions, key);
  }

  @Override
  public long scan(byte[] from, int n) {
    long bytes = 0;
    try (RocksIterator it = db.newIterator(readOptions)) {
      it.seek(from);
      for (int i = 0; i < n && it.isValid(); i++, it.next()) {
        bytes += it.key().length + it.value().length;
      }
    }
    return bytes;
  }

  /** A numeric property (read as text: some, such as the blob ones, have no integer form). */
  private long property(String name) throws RocksDBException {
    return Long.parseLong(db.getProperty(name).trim());
  }

  @Override
  public boolean compacting() throws RocksDBException {
    return property("rocksdb.num-running-compactions") > 0;
  }

  @Override
  public int level0Files() throws RocksDBException {
    return (int) property("rocksdb.num-files-at-level0");
  }

  @Override
  public Counters counters() throws RocksDBException {
    long useful = statistics.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
    long positive = statistics.getTickerCount(TickerType.BLOOM_FILTER_FULL_POSITIVE);
    long bloom = 0;
    for (TableProperties p : db.getPropertiesOfAllTables().values()) {
      bloom += p.getFilterSize() + p.getIndexSize();
    }
    // Blob files written by compaction (relocation by blob GC) count in COMPACT_WRITE_BYTES.
    return new Counters(
        statistics.getTickerCount(TickerType.COMPACT_WRITE_BYTES),
        useful + positive,
        positive,
        bloom,
        0,
        statistics.getTickerCount(TickerType.STALL_MICROS),
        FileReadBytes.UNKNOWN);
  }

  @Override
  public boolean settle(Duration max) throws RocksDBException, InterruptedException {
    try (FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
      db.flush(f);
    }
    long deadline = System.nanoTime() + max.toNanos();
    while (System.nanoTime() < deadline) {
      if (property("rocksdb.compaction-pending") == 0
          && property("rocksdb.num-running-compactions") == 0
          && property("rocksdb.num-running-flushes") == 0) {
        return true;
      }
      Thread.sleep(100);
    }
    return false;
  }

  @Override
  public String shape() throws RocksDBException {
    StringBuilder b = new StringBuilder();
    for (int l = 0; l < 7; l++) {
      long files = property("rocksdb.num-files-at-level" + l);
      if (files > 0) {
        b.append("L").append(l).append(' ').append(files).append(" files, ");
      }
    }
    return b.append(property("rocksdb.num-blob-files"))
        .append(" blob files (")
        .append(property("rocksdb.live-blob-file-garbage-size") >> 20)
        .append(" MiB garbage), ")
        .append(statistics.getTickerCount(TickerType.BLOB_DB_GC_BYTES_RELOCATED) >> 20)
        .append(" MiB relocated by blob GC")
        .toString();
  }

  @Override
  public void close() throws RocksDBException {
    db.close();
    readOptions.close();
    writeOptions.close();
    options.close();
    statistics.close();
    filter.close();
    cache.close();
  }
}
