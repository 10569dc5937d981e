package io.shale.engine.sstable;

import io.shale.engine.bloom.BloomFilter;
import io.shale.engine.concurrent.RefCount;
import io.shale.engine.io.Checksums;
import io.shale.engine.io.CorruptionException;
import io.shale.engine.io.DirectBuffers;
import io.shale.engine.io.DurableFiles;
import io.shale.engine.io.FileReads;
import io.shale.engine.io.ReadAdvice;
import io.shale.engine.io.Readahead;
import io.shale.engine.io.Varints;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.key.Keys;
import io.shale.engine.key.StoredValue;
import io.shale.engine.key.ValueKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * An open table: its footer, index, filter and properties are read and verified at open; the index
 * block and the Bloom filter are kept in native memory ({@link TableMemory}), freed when the last
 * reference goes; data blocks are read on demand through the block cache.
 *
 * <p>Data blocks are read from a read-only memory mapping of the file when {@code mmap} is on (the
 * default): a copy out of the page cache (and an LZ4 decompression) per block, no system call, and
 * no block cache: the page cache is the cache. Measured on the engine benchmark, an on-heap cache
 * of decoded blocks cost more than it saved, because blocks evicted after surviving a few
 * collections are old-generation garbage (GC time on point reads fell from 1,171 ms to 41 ms per 6
 * s without it). Without a mapping, blocks are read with positional reads through the block cache.
 *
 * <p>Thread-safe: reads are positional; iterators are per-caller. Reference counted by {@link
 * TableCache}: the channel closes, and the mapping and the native memory are released, when the
 * last user releases it; every iterator and point read runs under a reference.
 */
public final class TableReader {
  /**
   * Read-ahead without a memory mapping: a compaction reads its inputs forward in large windows
   * (block-by-block reads made one 44 MB compaction take 13 s on the seed benchmark's disk;
   * RocksDB's compaction_readahead_size is 2 MiB), sharing {@code COMPACTION_READAHEAD_BUDGET}
   * among its inputs so that a level-0 backlog of a hundred files does not need a hundred buffers
   * of 1 MiB; scans start with exact block reads and grow a window while they stay sequential.
   */
  static final int COMPACTION_READAHEAD_MAX = 1 << 20;

  static final int COMPACTION_READAHEAD_MIN = 64 << 10;
  static final int COMPACTION_READAHEAD_BUDGET = 8 << 20;

  /** Compaction windows kept per background thread between jobs: one job's worth. */
  private static final DirectBuffers COMPACTION_WINDOWS =
      new DirectBuffers(COMPACTION_READAHEAD_BUDGET);

  static final int SCAN_READAHEAD_INITIAL = 16 << 10;
  static final int SCAN_READAHEAD_MAX = 64 << 10;

  /**
   * Scan windows kept per reading thread: as many as a scan of a dozen tables grows (each thread's
   * scans take them as windows open and give them back when their iterators close).
   */
  static final DirectBuffers SCAN_WINDOWS = new DirectBuffers(12 * SCAN_READAHEAD_MAX);

  private final Path file;
  private final long fileNumber;
  private final FileChannel channel;
  private final long fileSize;
  private final BlockCache cache;
  private final Block index;
  private final BloomFilter filter;
  private final TableProperties properties;
  private final RefCount refs = new RefCount();

  /** The whole file mapped read-only, or null when reads go through the channel. */
  private final MemorySegment map;

  private final TableMemory.Region memory;
  private final FileReads reads;

  private TableReader(
      Path file,
      long fileNumber,
      FileChannel channel,
      BlockCache cache,
      MemorySegment map,
      TableMemory.Region memory,
      FileReads reads)
      throws IOException {
    this.file = file;
    this.memory = memory;
    this.reads = reads;
    this.fileNumber = fileNumber;
    this.channel = channel;
    this.cache = cache;
    this.fileSize = channel.size();
    if (fileSize < Footer.SIZE) {
      throw new CorruptionException(
          file, 0, "file of " + fileSize + " bytes is too short for a table");
    }
    this.map = map;
    ByteBuffer fb = ByteBuffer.allocate(Footer.SIZE);
    DurableFiles.readFully(channel, fb, fileSize - Footer.SIZE, file);
    reads.add(FileReads.FileKind.TABLE, FileReads.Cause.OTHER, Footer.SIZE);
    Footer footer = Footer.decode(fb.array(), file, fileSize - Footer.SIZE, fileSize);
    Contents indexBytes = readVerified(footer.index(), null, null, true, FileReads.Cause.OTHER);
    this.index =
        new Block(
            memory.copyOf(indexBytes.bytes(), indexBytes.length()), file, footer.index().offset());
    Contents filterBytes = readVerified(footer.filter(), null, null, true, FileReads.Cause.OTHER);
    this.filter =
        filterBytes.length() == 0
            ? null
            : BloomFilter.of(memory.copyOf(filterBytes.bytes(), filterBytes.length()));
    byte[] propsBytes =
        readVerified(footer.properties(), null, null, true, FileReads.Cause.OTHER).exact();
    try {
      this.properties = TableProperties.decode(propsBytes);
    } catch (IllegalStateException e) {
      throw new CorruptionException(
          file, footer.properties().offset(), "bad properties block: " + e.getMessage());
    }
  }

  /** Open and verify the fixed parts of a table, read with positional reads. */
  public static TableReader open(Path file, long fileNumber, BlockCache cache) throws IOException {
    return open(
        file, fileNumber, cache, false, false, new FileReads(), new TableMemory(Long.MAX_VALUE));
  }

  /**
   * Open and verify the fixed parts of a table; {@code mmap} maps it for reading, {@code
   * adviseRandom} tells the kernel its reads are random ({@link ReadAdvice}), every read it issues
   * is counted in {@code reads}, and its index and filter are counted in {@code memory}. The caller
   * owns the returned reference.
   */
  public static TableReader open(
      Path file,
      long fileNumber,
      BlockCache cache,
      boolean mmap,
      boolean adviseRandom,
      FileReads reads,
      TableMemory memory)
      throws IOException {
    FileChannel ch = ReadAdvice.open(file, adviseRandom && !mmap);
    TableMemory.Region region = memory.newRegion();
    TableReader r = null;
    try {
      long size = ch.size();
      MemorySegment map =
          mmap && size >= Footer.SIZE
              ? ch.map(FileChannel.MapMode.READ_ONLY, 0, size, region.arena())
              : null;
      r = new TableReader(file, fileNumber, ch, cache, map, region, reads);
      return r;
    } finally {
      if (r == null) {
        region.close(); // a table that failed verification: unmapped and freed
        ch.close();
      }
    }
  }

  public Path file() {
    return file;
  }

  public long fileNumber() {
    return fileNumber;
  }

  public TableProperties properties() {
    return properties;
  }

  /** Bytes of the Bloom filter held in memory (0 when the table has none). */
  public int filterMemoryBytes() {
    return filter == null ? 0 : filter.memoryBytes();
  }

  /** Bytes of the index block held in memory. */
  public int indexMemoryBytes() {
    return index.sizeBytes();
  }

  /** Native bytes this table holds: its index block and its filter. */
  long nativeBytes() {
    return memory.allocatedBytes();
  }

  /** False only if the Bloom filter proves the table has no version of {@code userKey}. */
  public boolean mayContain(byte[] userKey) {
    return filter == null || filter.mayContain(userKey);
  }

  boolean retain() {
    return refs.tryRetain();
  }

  /** Drop one reference; the file is closed when the last one goes. */
  public void release() {
    if (refs.release("table reader")) {
      memory.close();
      try {
        channel.close();
      } catch (IOException ignored) {
        // a read-only channel: nothing is lost by a failed close
      }
    }
  }

  /** Block contents: {@code bytes[0, length)}; the array may hold the trailer after them. */
  private record Contents(byte[] bytes, int length) {
    byte[] exact() {
      return bytes.length == length ? bytes : java.util.Arrays.copyOf(bytes, length);
    }
  }

  /**
   * Read a block, check its checksum and decode it. A block the reader {@code keep}s (index, filter
   * and properties, read at open) gets an array of its own; a data block lands in {@code buffers}'
   * decoded array, valid until their next use. The bytes as stored pass through the thread's
   * scratch array, so reading a data block allocates nothing.
   */
  private Contents readVerified(
      BlockHandle h,
      Readahead readahead,
      BlockReadBuffers buffers,
      boolean keep,
      FileReads.Cause cause)
      throws IOException {
    int storedLength = h.size() + BlockHandle.TRAILER_SIZE;
    byte[] b = BlockReadBuffers.stored(storedLength);
    if (map != null) {
      if (h.offset() < 0 || h.offset() + storedLength > fileSize) {
        throw new CorruptionException(
            file,
            h.offset(),
            "block of " + storedLength + " bytes reaches past the end of the file");
      }
      MemorySegment.copy(map, ValueLayout.JAVA_BYTE, h.offset(), b, 0, storedLength);
      reads.add(FileReads.FileKind.TABLE, cause, storedLength);
    } else if (readahead != null) {
      readahead.read(
          fileNumber,
          h.offset(),
          b,
          0,
          storedLength,
          (offset, into, needed) -> readSome(offset, into, needed, cause));
    } else {
      DurableFiles.readFully(channel, ByteBuffer.wrap(b, 0, storedLength), h.offset(), file);
      reads.add(FileReads.FileKind.TABLE, cause, storedLength);
    }
    byte type = b[h.size()];
    int stored = Varints.readFixed32(b, h.size() + 1);
    if (Checksums.crc32c(b, 0, h.size(), type) != stored) {
      throw new CorruptionException(
          file, h.offset(), "block checksum mismatch (block of " + h.size() + " bytes)");
    }
    Compression c = Compression.fromCode(type);
    if (c == null) {
      throw new CorruptionException(
          file, h.offset() + h.size(), "unknown compression type " + type);
    }
    if (c == Compression.LZ4) {
      try {
        int rawLength = Compression.lz4RawLength(b, h.size());
        byte[] raw = keep ? new byte[rawLength] : buffers.decoded(rawLength);
        return new Contents(raw, Compression.lz4Decompress(b, h.size(), raw));
      } catch (RuntimeException e) {
        throw new CorruptionException(file, h.offset(), "LZ4 block does not decompress: " + e);
      }
    }
    byte[] raw = keep ? new byte[h.size()] : buffers.decoded(h.size());
    System.arraycopy(b, 0, raw, 0, h.size());
    return new Contents(raw, h.size());
  }

  /** {@link Readahead.Source} over this table's channel. */
  private int readSome(long offset, ByteBuffer into, int needed, FileReads.Cause cause)
      throws IOException {
    if (offset + needed > fileSize) {
      throw new CorruptionException(
          file,
          offset,
          "block of "
              + needed
              + " bytes reaches past the end of the file ("
              + fileSize
              + " bytes)");
    }
    int n = (int) Math.min(into.remaining(), fileSize - offset);
    into.limit(into.position() + n);
    DurableFiles.readFully(channel, into, offset, file);
    reads.add(FileReads.FileKind.TABLE, cause, n);
    return n;
  }

  /**
   * Data block {@code h}: from the block cache, else read (and cached if {@code fillCache}). The
   * block lives in {@code buffers}' decoded array until their next read.
   */
  private Block dataBlock(
      BlockHandle h,
      boolean fillCache,
      Readahead readahead,
      BlockReadBuffers buffers,
      FileReads.Cause cause) {
    if (map != null) {
      cache.countUncachedRead();
      try {
        Contents c = readVerified(h, null, buffers, false, cause);
        return new Block(c.bytes(), c.length(), file, h.offset());
      } catch (IOException e) {
        throw new UncheckedIOException("reading " + file + " at offset " + h.offset(), e);
      }
    }
    Block b = cache.get(fileNumber, h.offset(), file, buffers);
    if (b != null) {
      return b;
    }
    try {
      Contents c = readVerified(h, readahead, buffers, false, cause);
      b = new Block(c.bytes(), c.length(), file, h.offset());
      if (fillCache) {
        cache.put(fileNumber, h.offset(), c.bytes(), c.length());
      }
      return b;
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file + " at offset " + h.offset(), e);
    }
  }

  private BlockHandle handleAt(Block.Iter indexIter) {
    try {
      BlockHandle h = indexIter.valueAsHandle();
      if (h.offset() < 0 || h.offset() + h.size() > fileSize) {
        throw new IllegalStateException("handle out of bounds");
      }
      return h;
    } catch (IllegalStateException e) {
      throw new CorruptionException(file, 0, "bad block handle in index: " + e.getMessage());
    }
  }

  /**
   * The newest version of {@code userKey} with sequence {@code <= readSequence}, or null if this
   * table holds none. Does not consult the Bloom filter (the caller does, to count its checks).
   */
  public StoredValue get(byte[] userKey, long readSequence) {
    try (TableIterator it =
        new TableIterator(
            Direction.FORWARD,
            true,
            null,
            n -> {},
            BlockReadBuffers.ofThread(),
            FileReads.Cause.POINT_READ)) {
      it.seek(userKey);
      while (it.valid() && Keys.compare(it.userKey(), userKey) == 0) {
        if (it.sequence() <= readSequence) {
          return new StoredValue(
              it.kind(),
              it.kind() == ValueKind.TOMBSTONE ? new byte[0] : it.value(),
              it.sequence());
        }
        it.next();
      }
      return null;
    }
  }

  /**
   * An iterator over this table for a reader: blocks go through the block cache; its buffers come
   * from the thread's pool and go back when it is closed.
   */
  public InternalIterator iterator(Direction direction) {
    BlockReadBuffers buffers = BlockReadBuffers.borrow();
    Readahead ra =
        map != null || direction != Direction.FORWARD
            ? null
            : buffers.scanReadahead(SCAN_READAHEAD_INITIAL, SCAN_READAHEAD_MAX);
    TableIterator it =
        new TableIterator(direction, true, ra, n -> {}, buffers, FileReads.Cause.SCAN);
    it.borrowed = true;
    return it;
  }

  /**
   * A forward iterator for one of {@code inputs} tables a compaction (or blob collection) merges:
   * blocks bypass the block cache, files are read ahead in windows that together stay within a
   * fixed budget, and the size of every block loaded is reported to {@code blockReadCharge} (the
   * I/O budget).
   */
  public InternalIterator compactionIterator(
      int inputs, java.util.function.LongConsumer blockReadCharge) {
    // A power of two, so that the windows a thread keeps fit the next job's inputs.
    int window =
        Math.max(
            COMPACTION_READAHEAD_MIN,
            Math.min(
                COMPACTION_READAHEAD_MAX,
                Integer.highestOneBit(COMPACTION_READAHEAD_BUDGET / Math.max(1, inputs))));
    return new TableIterator(
        Direction.FORWARD,
        false,
        map != null ? null : Readahead.fixed(window, COMPACTION_WINDOWS),
        blockReadCharge,
        new BlockReadBuffers(),
        FileReads.Cause.COMPACTION);
  }

  /** Read every data block and check its checksum; returns the number of blocks checked. */
  public long verifyAllBlocks() {
    long n = 0;
    BlockReadBuffers buffers = new BlockReadBuffers();
    Block.Iter idx = index.iterator(Direction.FORWARD);
    for (idx.seekToFirst(); idx.valid; idx.next()) {
      BlockHandle h = handleAt(idx);
      Block b = dataBlock(h, false, null, buffers, FileReads.Cause.OTHER);
      Block.Iter it = b.iterator(Direction.FORWARD);
      for (it.seekToFirst(); it.valid; it.next()) {
        it.kind();
      }
      n++;
    }
    return n;
  }

  private final class TableIterator implements InternalIterator {
    private final Direction direction;
    private final boolean fillCache;
    private final Block.Iter indexIter;
    private final java.util.function.LongConsumer readCharge;

    /** Null with a memory mapping (the kernel reads ahead) or backwards (never sequential). */
    private final Readahead readahead;

    private final BlockReadBuffers buffers;
    private final FileReads.Cause cause;

    /** True while the buffers are borrowed from the thread's pool (given back on close). */
    private boolean borrowed;

    private Block.Iter dataIter;

    TableIterator(
        Direction direction,
        boolean fillCache,
        Readahead readahead,
        java.util.function.LongConsumer readCharge,
        BlockReadBuffers buffers,
        FileReads.Cause cause) {
      this.buffers = buffers;
      this.cause = cause;
      this.direction = direction;
      this.fillCache = fillCache;
      this.readahead = readahead;
      this.readCharge = readCharge;
      this.indexIter = index.iterator(direction);
    }

    private void loadBlock() {
      if (!indexIter.valid) {
        dataIter = null;
        return;
      }
      BlockHandle h = handleAt(indexIter);
      readCharge.accept(h.size() + BlockHandle.TRAILER_SIZE);
      dataIter = dataBlock(h, fillCache, readahead, buffers, cause).iterator(direction);
    }

    /** Move across empty tails of blocks to the next entry in this direction. */
    private void skipExhaustedBlocks() {
      while (dataIter != null && !dataIter.valid) {
        indexIter.next();
        loadBlock();
        if (dataIter != null) {
          dataIter.seekToFirst();
        }
      }
    }

    @Override
    public boolean valid() {
      return dataIter != null && dataIter.valid;
    }

    @Override
    public void seekToFirst() {
      indexIter.seekToFirst();
      loadBlock();
      if (dataIter != null) {
        dataIter.seekToFirst();
      }
      skipExhaustedBlocks();
    }

    @Override
    public void seek(byte[] target) {
      if (direction == Direction.FORWARD) {
        indexIter.seek(target);
        loadBlock();
        if (dataIter != null) {
          dataIter.seek(target);
        }
        skipExhaustedBlocks();
        return;
      }
      // Reverse: the last entry < target is in the first block whose last key >= target, or it is
      // the last entry of the block before (or of the last block, if no block reaches target).
      indexIter.seekCeiling(target);
      if (indexIter.valid) {
        loadBlock();
        dataIter.seek(target);
        if (dataIter.valid) {
          return;
        }
        indexIter.next();
      } else {
        indexIter.seekToFirst();
      }
      loadBlock();
      if (dataIter != null) {
        dataIter.seekToFirst();
      }
      skipExhaustedBlocks();
    }

    @Override
    public void next() {
      dataIter.next();
      skipExhaustedBlocks();
    }

    @Override
    public byte[] userKey() {
      return dataIter.userKey();
    }

    @Override
    public long sequence() {
      return dataIter.sequence();
    }

    @Override
    public ValueKind kind() {
      return dataIter.kind();
    }

    @Override
    public byte[] value() {
      return dataIter.value();
    }

    @Override
    public io.shale.engine.iterator.ValueSlice valueSlice() {
      return dataIter.valueSlice();
    }

    @Override
    public void close() {
      dataIter = null;
      if (readahead != null && !borrowed) {
        readahead.release(); // a compaction's window, for the thread's next compaction
      }
      if (borrowed) {
        borrowed = false;
        buffers.giveBack();
      }
    }
  }
}
