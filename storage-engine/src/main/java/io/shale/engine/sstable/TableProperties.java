package io.shale.engine.sstable;

import io.shale.engine.io.ByteSink;
import io.shale.engine.io.Varints;

/**
 * Facts about a table, computed while it is written and stored in its properties block (and copied
 * into the manifest, so the compaction picker never opens a file to score it).
 *
 * <p>Encoded as tagged fields ({@code tag << 1 | wire type}, wire type 0 = varint, 1 = byte
 * string), so later versions can add fields that older readers skip.
 *
 * @param rawKeyBytes sum of user key lengths of all entries
 * @param rawValueBytes sum of inline value lengths of all entries (tombstones count 0; a blob
 *     pointer counts its encoded bytes)
 * @param level the level the table was written to (decides its Bloom bits per key)
 * @param blobBytes sum of the lengths of the blob values the table's pointers reference
 * @param blobFiles the blob files those pointers are in, ascending (blob GC finds the tables to
 *     rewrite by it)
 */
public record TableProperties(
    long entries,
    long tombstones,
    long rawKeyBytes,
    long rawValueBytes,
    long dataBlocks,
    long filterBytes,
    int bloomBitsPerKey,
    byte[] smallestKey,
    byte[] largestKey,
    long smallestSequence,
    long largestSequence,
    long creationTimeMillis,
    int level,
    long blobBytes,
    long[] blobFiles) {

  private static final int ENTRIES = 1;
  private static final int TOMBSTONES = 2;
  private static final int RAW_KEY = 3;
  private static final int RAW_VALUE = 4;
  private static final int DATA_BLOCKS = 5;
  private static final int FILTER_BYTES = 6;
  private static final int BLOOM_BITS = 7;
  private static final int SMALLEST = 8;
  private static final int LARGEST = 9;
  private static final int SMALLEST_SEQ = 10;
  private static final int LARGEST_SEQ = 11;
  private static final int CREATED = 12;
  private static final int LEVEL = 13;
  private static final int BLOB_BYTES = 14;
  private static final int BLOB_FILES = 15;

  /** A table that references no blob file. */
  public TableProperties(
      long entries,
      long tombstones,
      long rawKeyBytes,
      long rawValueBytes,
      long dataBlocks,
      long filterBytes,
      int bloomBitsPerKey,
      byte[] smallestKey,
      byte[] largestKey,
      long smallestSequence,
      long largestSequence,
      long creationTimeMillis,
      int level) {
    this(
        entries,
        tombstones,
        rawKeyBytes,
        rawValueBytes,
        dataBlocks,
        filterBytes,
        bloomBitsPerKey,
        smallestKey,
        largestKey,
        smallestSequence,
        largestSequence,
        creationTimeMillis,
        level,
        0,
        new long[0]);
  }

  /** True if some pointer of the table references blob file {@code number}. */
  public boolean referencesBlob(long number) {
    return java.util.Arrays.binarySearch(blobFiles, number) >= 0;
  }

  /** Fraction of entries that are tombstones, in [0, 1]. */
  public double tombstoneRatio() {
    return entries == 0 ? 0 : (double) tombstones / entries;
  }

  public byte[] encode() {
    ByteSink s = new ByteSink(128 + smallestKey.length + largestKey.length);
    num(s, ENTRIES, entries);
    num(s, TOMBSTONES, tombstones);
    num(s, RAW_KEY, rawKeyBytes);
    num(s, RAW_VALUE, rawValueBytes);
    num(s, DATA_BLOCKS, dataBlocks);
    num(s, FILTER_BYTES, filterBytes);
    num(s, BLOOM_BITS, bloomBitsPerKey);
    bytes(s, SMALLEST, smallestKey);
    bytes(s, LARGEST, largestKey);
    num(s, SMALLEST_SEQ, smallestSequence);
    num(s, LARGEST_SEQ, largestSequence);
    num(s, CREATED, creationTimeMillis);
    num(s, LEVEL, level);
    num(s, BLOB_BYTES, blobBytes);
    ByteSink files = new ByteSink(blobFiles.length * 3);
    for (long f : blobFiles) {
      files.putVarint(f);
    }
    bytes(s, BLOB_FILES, files.toByteArray());
    return s.toByteArray();
  }

  private static void num(ByteSink s, int tag, long v) {
    s.putVarint((long) tag << 1).putVarint(v);
  }

  private static void bytes(ByteSink s, int tag, byte[] v) {
    s.putVarint((long) tag << 1 | 1).putBytes(v);
  }

  /** Decode; throws IllegalStateException on malformed input (the caller adds file and offset). */
  public static TableProperties decode(byte[] b) {
    long[] n = new long[16];
    long[] blobs = new long[0];
    byte[] smallest = null;
    byte[] largest = null;
    Varints.Cursor c = new Varints.Cursor(b, 0, b.length);
    while (c.hasRemaining()) {
      long tw = Varints.readVarint64(c);
      int tag = (int) (tw >>> 1);
      if ((tw & 1) == 0) {
        long v = Varints.readVarint64(c);
        if (tag < n.length) {
          n[tag] = v;
        }
      } else {
        int len = Varints.readVarint32(c);
        if (c.pos + len > c.limit) {
          throw new IllegalStateException("property " + tag + " overruns the block");
        }
        byte[] v = java.util.Arrays.copyOfRange(b, c.pos, c.pos + len);
        c.pos += len;
        if (tag == SMALLEST) {
          smallest = v;
        } else if (tag == LARGEST) {
          largest = v;
        } else if (tag == BLOB_FILES) {
          Varints.Cursor fc = new Varints.Cursor(v, 0, v.length);
          java.util.ArrayList<Long> list = new java.util.ArrayList<>();
          while (fc.hasRemaining()) {
            list.add(Varints.readVarint64(fc));
          }
          blobs = list.stream().mapToLong(Long::longValue).toArray();
        }
      }
    }
    if (smallest == null || largest == null) {
      throw new IllegalStateException("properties lack the smallest or largest key");
    }
    return new TableProperties(
        n[ENTRIES],
        n[TOMBSTONES],
        n[RAW_KEY],
        n[RAW_VALUE],
        n[DATA_BLOCKS],
        n[FILTER_BYTES],
        (int) n[BLOOM_BITS],
        smallest,
        largest,
        n[SMALLEST_SEQ],
        n[LARGEST_SEQ],
        n[CREATED],
        (int) n[LEVEL],
        n[BLOB_BYTES],
        blobs);
  }
}
