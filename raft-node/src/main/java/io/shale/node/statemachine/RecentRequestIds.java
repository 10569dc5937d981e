package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The request ids recorded in the last {@link RequestRecords#RETAIN_ENTRIES} log entries, as Bloom
 * filters in memory, so that the apply thread looks a request id up in the engine only when it may
 * have been recorded: nearly every write carries a fresh id, and that lookup (every memtable, then
 * the tables' filters) was a fifth of a replica's apply time.
 *
 * <p>Invariant: {@link #mayHold} is false only if no record of the id young enough for {@link
 * RequestRecords#find} to return exists, so skipping the lookup changes no reply and every replica
 * still answers alike, whatever its filters hold. Until {@link #load} has run, and for indexes the
 * filters no longer cover (dropped for the memory bound), it answers true.
 *
 * <p>Ids are kept in segments of {@link #SEGMENT_IDS} ids, each with the highest index it holds; a
 * segment whose highest index is older than the retention is dropped. Apply thread only.
 */
final class RecentRequestIds {
  /**
   * Ids per segment, 12 bits each: 1.5 MiB, about 0.5% false positives when full. Segments are
   * large because a lookup asks every one: at 128 writes in flight the retention holds about 3 M
   * ids, four segments.
   */
  static final int SEGMENT_IDS = 1 << 20;

  /** At most this many segments (24 MiB); beyond, the oldest is dropped and its indexes unknown. */
  static final int MAX_SEGMENTS = 16;

  private static final int BITS_PER_ID = 12;

  /** Bits set per id, all in one 512-bit block (one cache line), so a probe costs one miss. */
  private static final int PROBES = 8;

  private static final int BLOCK_WORDS = 8;

  private static final class Segment {
    final long[] words;
    int ids;
    long highestIndex;

    Segment(int capacity) {
      int blocks = Math.max(1, capacity * BITS_PER_ID / 512);
      words = new long[blocks * BLOCK_WORDS];
    }

    void set(long h1, long h2) {
      int base = (int) Long.remainderUnsigned(h1, words.length / BLOCK_WORDS) * BLOCK_WORDS;
      for (int i = 0; i < PROBES; i++) {
        int bit = (int) (h2 >>> (i * 8)) & 511;
        words[base + (bit >>> 6)] |= 1L << bit;
      }
    }

    boolean has(long h1, long h2) {
      int base = (int) Long.remainderUnsigned(h1, words.length / BLOCK_WORDS) * BLOCK_WORDS;
      for (int i = 0; i < PROBES; i++) {
        int bit = (int) (h2 >>> (i * 8)) & 511;
        if ((words[base + (bit >>> 6)] & (1L << bit)) == 0) {
          return false;
        }
      }
      return true;
    }
  }

  private final int segmentIds;
  private final int maxSegments;
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();

  /** Ids recorded at or below this index may be missing from the filters (MIN_VALUE: none). */
  private long unknownUpTo = Long.MAX_VALUE;

  RecentRequestIds() {
    this(SEGMENT_IDS, MAX_SEGMENTS);
  }

  RecentRequestIds(int segmentIds, int maxSegments) {
    this.segmentIds = segmentIds;
    this.maxSegments = maxSegments;
  }

  /**
   * Fills the filters from {@code engine}'s records of the retention before {@code appliedIndex}
   * (the ids' index keys only). Called whenever the apply thread gets an engine (open, install).
   */
  void load(Engine engine, long appliedIndex) {
    segments.clear();
    unknownUpTo = Long.MIN_VALUE;
    long from = Math.max(0, appliedIndex - RequestRecords.RETAIN_ENTRIES);
    int at = RequestRecords.indexKeyPrefix(0).length;
    byte[] start = RequestRecords.indexKeyPrefix(from);
    byte[] end = RequestRecords.indexKeyPrefix(Long.MAX_VALUE);
    try (ScanIterator it = engine.scan(new ScanOptions(start, end, 0, false, true))) {
      while (it.next()) {
        byte[] k = it.key();
        add(Arrays.copyOfRange(k, at, k.length), ByteBuffer.wrap(k, at - 8, 8).getLong());
      }
    }
  }

  /** {@code requestId} was recorded at {@code index} (indexes never decrease between calls). */
  void add(byte[] requestId, long index) {
    Segment s = segments.peekLast();
    if (s == null || s.ids == segmentIds) {
      if (segments.size() == maxSegments) {
        unknownUpTo = Math.max(unknownUpTo, segments.removeFirst().highestIndex);
      }
      s = new Segment(segmentIds);
      segments.addLast(s);
    }
    s.set(hash(requestId, 0x9E3779B97F4A7C15L), hash(requestId, 0xC2B2AE3D27D4EB4FL));
    s.ids++;
    s.highestIndex = Math.max(s.highestIndex, index);
  }

  /**
   * Whether {@code requestId} may have a record young enough to answer a retry at {@code index};
   * false only when it certainly has none.
   */
  boolean mayHold(byte[] requestId, long index) {
    long oldestKept = index - RequestRecords.RETAIN_ENTRIES;
    while (!segments.isEmpty() && segments.peekFirst().highestIndex < oldestKept) {
      segments.removeFirst();
    }
    if (unknownUpTo >= oldestKept) {
      return true;
    }
    long h1 = hash(requestId, 0x9E3779B97F4A7C15L);
    long h2 = hash(requestId, 0xC2B2AE3D27D4EB4FL);
    for (Segment s : segments) {
      if (s.has(h1, h2)) {
        return true;
      }
    }
    return false;
  }

  /** Segments held now. */
  int segments() {
    return segments.size();
  }

  /**
   * A 64-bit mix of the id's bytes (clients choose ids, and the SDK's share a prefix and count up:
   * every byte is mixed in).
   */
  private static long hash(byte[] id, long seed) {
    long h = seed ^ id.length;
    for (byte b : id) {
      h = (h ^ (b & 0xff)) * 0x100000001B3L;
    }
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    return h ^ (h >>> 33);
  }
}
