package io.shale.engine.memtable;

import io.shale.engine.key.ValueKind;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A skiplist of internal keys (user key ascending, then sequence descending) whose nodes, keys and
 * values live in an {@link Arena}. A node is an address; 0 is the head, and as a link means "none".
 *
 * <p>Thread-safety: one writer, any number of readers, no locks. The writer fills a node
 * completely, then links it in level by level from the bottom with release stores; readers follow
 * links with acquire loads, so a node they reach is always complete. A node's key and sequence
 * never change. Its value may: a second put of the same key and sequence (a batch that writes a key
 * twice) writes a new value record and swings the node's value reference to it, so a reader sees
 * the old or the new value, never a mix.
 *
 * <p>Node layout, in longs: key length and height ({@code length << 8 | height}), sequence, value
 * reference, one next link per level, then the key itself as big-endian words (the last padded with
 * zeros). Keeping the key in the node, as RocksDB's inline skiplist does, makes each comparison of
 * a search touch one place in memory. A value record, in bytes: the kind's code, the length (4
 * bytes, in the machine's order), the bytes. Both live in the arena's native chunks.
 */
final class SkipList {
  static final int MAX_HEIGHT = 12;

  private static final int KEY_LENGTH_AND_HEIGHT = 0;
  private static final int SEQUENCE = 1;
  private static final int VALUE = 2;
  private static final int NEXT = 3;

  static final int VALUE_HEADER = 5;

  private static final long HEAD = 0;
  private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG;
  private static final ValueLayout.OfInt LENGTH = ValueLayout.JAVA_INT_UNALIGNED;
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final Arena arena;

  /** The highest level in use, written by the writer only; a stale value only costs a level. */
  private volatile int height = 1;

  private volatile int nodeCount;
  private final long[] splice = new long[MAX_HEIGHT];
  private long random = 0x9E3779B97F4A7C15L;

  SkipList(Arena arena) {
    this.arena = arena;
    long head = arena.allocateLongs(NEXT + MAX_HEIGHT);
    if (head != HEAD) {
      throw new IllegalStateException("the head must be the arena's first record");
    }
    // A recycled chunk holds old longs: the head's links must start empty.
    for (int slot = 0; slot < NEXT + MAX_HEIGHT; slot++) {
      arena.setLong(head, slot, 0);
    }
  }

  /**
   * Writer only: insert {@code key@sequence}, or replace the value of that exact entry if present.
   *
   * @return true if a node was added, false if an existing entry's value was replaced
   */
  boolean put(byte[] key, long sequence, ValueKind kind, byte[] value) {
    long valueRef = writeValue(kind, value);
    long[] words = words(key);
    long found = arena.getLong(descend(words, key.length, sequence, splice), NEXT);
    if (found != 0 && compare(found, words, key.length, sequence) == 0) {
      arena.setLinkRelease(found, VALUE, valueRef);
      return false;
    }
    int h = randomHeight();
    int current = height;
    if (h > current) {
      for (int level = current; level < h; level++) {
        splice[level] = HEAD;
      }
      // Readers that see the new height before the head's new links simply drop a level.
      height = h;
    }
    long node = arena.allocateLongs(NEXT + h + (key.length + 7) / 8);
    arena.setLong(node, KEY_LENGTH_AND_HEIGHT, (long) key.length << 8 | h);
    for (int i = 0; i < key.length; i += 8) {
      arena.setLong(node, NEXT + h + i / 8, word(key, i));
    }
    arena.setLong(node, SEQUENCE, sequence);
    arena.setLong(node, VALUE, valueRef);
    for (int level = 0; level < h; level++) {
      arena.setLong(node, NEXT + level, arena.getLong(splice[level], NEXT + level));
    }
    for (int level = 0; level < h; level++) {
      arena.setLinkRelease(splice[level], NEXT + level, node);
    }
    nodeCount = nodeCount + 1;
    return true;
  }

  int nodeCount() {
    return nodeCount;
  }

  /** The first node at or after {@code key@sequence} in internal order, or 0. */
  long seekAtOrAfter(byte[] key, long sequence) {
    // Re-check after the descent: the writer may have linked a node after the predecessor since,
    // and one that sorts before the target (a newer version of the key) is not an answer.
    long[] words = words(key);
    long n = arena.getLinkAcquire(descend(words, key.length, sequence, null), NEXT);
    while (n != 0 && compare(n, words, key.length, sequence) < 0) {
      n = arena.getLinkAcquire(n, NEXT);
    }
    return n;
  }

  /** The last node before {@code key@sequence} in internal order, or 0 (the head) if none. */
  long seekBefore(byte[] key, long sequence) {
    return descend(words(key), key.length, sequence, null);
  }

  /**
   * The search every operation shares: from the top level down, the last node before {@code
   * key@sequence} on each level, recorded in {@code splice} if given (the writer's insert points);
   * returns the one on level 0. The key comes as its words ({@link #words}), converted once for the
   * whole search rather than at each of its comparisons.
   */
  private long descend(long[] key, int keyLength, long sequence, long[] splice) {
    long x = HEAD;
    for (int level = height - 1; level >= 0; level--) {
      long next = arena.getLinkAcquire(x, NEXT + level);
      while (next != 0 && compare(next, key, keyLength, sequence) < 0) {
        x = next;
        next = arena.getLinkAcquire(x, NEXT + level);
      }
      if (splice != null) {
        splice[level] = x;
      }
    }
    return x;
  }

  /** The last node, or 0 if the list is empty. */
  long last() {
    long x = HEAD;
    for (int level = height - 1; level >= 0; level--) {
      long next = arena.getLinkAcquire(x, NEXT + level);
      while (next != 0) {
        x = next;
        next = arena.getLinkAcquire(x, NEXT + level);
      }
    }
    return x;
  }

  long first() {
    return arena.getLinkAcquire(HEAD, NEXT);
  }

  long next(long node) {
    return arena.getLinkAcquire(node, NEXT);
  }

  /** Compares a node's internal key with {@code key@sequence}. */
  int compare(long node, byte[] key, long sequence) {
    return compare(node, words(key), key.length, sequence);
  }

  /** As {@link #compare(long, byte[], long)}, the key given as its words and length. */
  private int compare(long node, long[] key, int keyLength, long sequence) {
    MemorySegment chunk = arena.longs(node);
    long at = Arena.offsetOf(node);
    long lengthAndHeight = chunk.get(WORD, at);
    int length = (int) (lengthAndHeight >>> 8);
    long words = at + (NEXT + (lengthAndHeight & 0xff)) * Long.BYTES;
    int commonWords = (Math.min(length, keyLength) + 7) / 8;
    // Words are compared as unsigned numbers, which orders them as their bytes. Past the shorter
    // key's end its word holds zeros, so a difference there puts the shorter key first, as the
    // byte order does; if none, the shorter key is a prefix of the other and sorts first.
    for (int w = 0; w < commonWords; w++) {
      long a = chunk.get(WORD, words + (long) w * Long.BYTES);
      long b = key[w];
      if (a != b) {
        return Long.compareUnsigned(a, b);
      }
    }
    if (length != keyLength) {
      return length < keyLength ? -1 : 1;
    }
    return Long.compare(sequence, chunk.get(WORD, at + SEQUENCE * Long.BYTES));
  }

  /** {@code key} as big-endian words, the last padded with zeros (as keys are kept in nodes). */
  private static long[] words(byte[] key) {
    long[] words = new long[(key.length + 7) / 8];
    for (int w = 0; w < words.length; w++) {
      words[w] = word(key, w * 8);
    }
    return words;
  }

  /** True if the node's user key equals {@code key}. */
  boolean hasUserKey(long node, byte[] key) {
    MemorySegment chunk = arena.longs(node);
    long at = Arena.offsetOf(node);
    long lengthAndHeight = chunk.get(WORD, at);
    if ((int) (lengthAndHeight >>> 8) != key.length) {
      return false;
    }
    long words = at + (NEXT + (lengthAndHeight & 0xff)) * Long.BYTES;
    for (int i = 0; i < key.length; i += 8) {
      if (chunk.get(WORD, words + i) != word(key, i)) {
        return false;
      }
    }
    return true;
  }

  byte[] userKey(long node) {
    MemorySegment chunk = arena.longs(node);
    long at = Arena.offsetOf(node);
    long lengthAndHeight = chunk.get(WORD, at);
    byte[] key = new byte[(int) (lengthAndHeight >>> 8)];
    long words = at + (NEXT + (lengthAndHeight & 0xff)) * Long.BYTES;
    for (int i = 0; i < key.length; i += 8) {
      long w = chunk.get(WORD, words + i);
      if (i + 8 <= key.length) {
        LONG.set(key, i, w);
      } else {
        for (int j = i; j < key.length; j++) {
          key[j] = (byte) (w >>> (56 - 8 * (j - i)));
        }
      }
    }
    return key;
  }

  /** Bytes {@code [i, i + 8)} of {@code key} as a big-endian word, zeros past its end. */
  private static long word(byte[] key, int i) {
    if (i + 8 <= key.length) {
      return (long) LONG.get(key, i);
    }
    long w = 0;
    for (int j = i; j < key.length; j++) {
      w |= (key[j] & 0xffL) << (56 - 8 * (j - i));
    }
    return w;
  }

  long sequence(long node) {
    return arena.getLong(node, SEQUENCE);
  }

  /**
   * The node's current value record; read kind and bytes from this one reference, so that both come
   * from the same put.
   */
  long valueRef(long node) {
    return arena.getLinkAcquire(node, VALUE);
  }

  ValueKind kind(long valueRef) {
    return ValueKind.fromCode(
        arena.bytes(valueRef).get(ValueLayout.JAVA_BYTE, Arena.offsetOf(valueRef)));
  }

  int valueLength(long valueRef) {
    return arena.bytes(valueRef).get(LENGTH, Arena.offsetOf(valueRef) + 1L);
  }

  /**
   * Copies the value's bytes into {@code into} at 0; {@code into} holds at least {@link
   * #valueLength} bytes.
   */
  void copyValue(long valueRef, int length, byte[] into) {
    MemorySegment.copy(
        arena.bytes(valueRef),
        ValueLayout.JAVA_BYTE,
        Arena.offsetOf(valueRef) + (long) VALUE_HEADER,
        into,
        0,
        length);
  }

  private long writeValue(ValueKind kind, byte[] value) {
    long ref = arena.allocateBytes(VALUE_HEADER + value.length);
    MemorySegment chunk = arena.bytes(ref);
    long at = Arena.offsetOf(ref);
    chunk.set(ValueLayout.JAVA_BYTE, at, (byte) kind.code());
    chunk.set(LENGTH, at + 1, value.length);
    MemorySegment.copy(value, 0, chunk, ValueLayout.JAVA_BYTE, at + VALUE_HEADER, value.length);
    return ref;
  }

  /** Height 1 with probability 3/4, each further level with probability 1/4 (as LevelDB). */
  private int randomHeight() {
    random ^= random << 13;
    random ^= random >>> 7;
    random ^= random << 17;
    long bits = random;
    int h = 1;
    while (h < MAX_HEIGHT && (bits & 3) == 0) {
      h++;
      bits >>>= 2;
    }
    return h;
  }
}
