package io.shale.engine.sstable;

import io.shale.engine.io.CorruptionException;
import io.shale.engine.io.Varints;
import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.ValueSlice;
import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A decoded, checksum-verified block. Immutable and shared through the block cache; each iterator
 * keeps its own cursor. Forward iterators decode entry by entry from a restart point; reverse
 * iterators decode the whole block once (a block is a few KiB) and walk it backwards.
 *
 * <p>Its bytes are a {@link MemorySegment}: a data block's lie in a reader's array on the heap, a
 * table's index block in native memory that its {@link TableReader} owns. Reading a block whose
 * memory was freed throws {@link IllegalStateException} (never reads freed memory).
 */
final class Block {
  private static final ValueLayout.OfInt INT_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final MemorySegment data;

  /** The array behind {@link #data} when it lies on the heap, else null. */
  private final byte[] array;

  private final int restartsOffset;
  private final int restartCount;
  private final Path file;
  private final long fileOffset;
  private final int length;

  /** A block whose contents are {@code data[0, length)}; bytes past length are ignored. */
  Block(byte[] data, int length, Path file, long fileOffset) {
    this(MemorySegment.ofArray(data), data, length, file, fileOffset);
  }

  /** A block whose contents are all of {@code data} (native memory its owner keeps alive). */
  Block(MemorySegment data, Path file, long fileOffset) {
    this(data, null, (int) Math.min(Integer.MAX_VALUE, data.byteSize()), file, fileOffset);
  }

  private Block(MemorySegment data, byte[] array, int length, Path file, long fileOffset) {
    this.data = data;
    this.array = array;
    this.file = file;
    this.fileOffset = fileOffset;
    this.length = length;
    if (length < 4 || length > data.byteSize()) {
      throw corrupt("block too short (" + length + " bytes)");
    }
    restartCount = data.get(INT_LE, length - 4);
    long ro = (long) length - 4 - 4L * restartCount;
    if (restartCount <= 0 || ro < 0) {
      throw corrupt("bad restart count " + restartCount);
    }
    restartsOffset = (int) ro;
  }

  /** Bytes of contents (the array may be longer). */
  int sizeBytes() {
    return length;
  }

  /*
   * Data blocks (on the heap) are read through their array: the hot path of every get and scan,
   * where heap segment accesses measured slower (engine-bench gets of present keys 1.05x RocksDB
   * against 1.57x on arrays). Index blocks (native) go through the segment.
   */
  private byte byteAt(int i) {
    return array != null ? array[i] : data.get(ValueLayout.JAVA_BYTE, i);
  }

  private void copy(int from, byte[] to, int toOffset, int length) {
    if (array != null) {
      System.arraycopy(array, from, to, toOffset, length);
    } else if (length <= 64) {
      // A key's few bytes: a plain loop costs less than the bulk copy's setup.
      for (int j = 0; j < length; j++) {
        to[toOffset + j] = data.get(ValueLayout.JAVA_BYTE, from + j);
      }
    } else {
      MemorySegment.copy(data, ValueLayout.JAVA_BYTE, from, to, toOffset, length);
    }
  }

  private CorruptionException corrupt(String what) {
    return new CorruptionException(file, fileOffset, what);
  }

  private int restart(int i) {
    int at = restartsOffset + 4 * i;
    return array != null ? Varints.readFixed32(array, at) : data.get(INT_LE, at);
  }

  Iter iterator(Direction direction) {
    return direction == Direction.FORWARD ? new ForwardIter() : new ReverseIter();
  }

  /** A cursor over this block's entries. */
  abstract class Iter {
    long trailer;
    int valueOffset;
    int valueLength;
    boolean valid;

    abstract void seekToFirst();

    /** Forward: first entry with user key >= target. Reverse: last entry with user key < target. */
    abstract void seek(byte[] target);

    /**
     * Position at the first entry (in key order) with user key >= target, whatever the direction.
     */
    abstract void seekCeiling(byte[] target);

    abstract void next();

    /** The current user key. The array is not shared with later positions. */
    abstract byte[] userKey();

    long sequence() {
      return Keys.sequenceOf(trailer);
    }

    ValueKind kind() {
      ValueKind k = ValueKind.fromCode((int) (trailer & 0xff));
      if (k == null) {
        throw corrupt("unknown entry kind " + (trailer & 0xff));
      }
      return k;
    }

    byte[] value() {
      byte[] v = new byte[valueLength];
      copy(valueOffset, v, 0, valueLength);
      return v;
    }

    /**
     * The value in place when the block lies on the heap (valid while this block is, see {@link
     * BlockReadBuffers}), else a copy.
     */
    ValueSlice valueSlice() {
      return array != null
          ? new ValueSlice(array, valueOffset, valueLength)
          : new ValueSlice(value(), 0, valueLength);
    }

    /**
     * The value read as a block handle (varint64 offset, varint32 size), as index entries hold.
     *
     * @throws IllegalStateException if the value is not one
     */
    BlockHandle valueAsHandle() {
      long end = (long) valueOffset + valueLength;
      long[] at = {valueOffset};
      long offset = varint(at, end, 64);
      long size = varint(at, end, 32);
      if (size > Integer.MAX_VALUE) {
        throw new IllegalStateException("block size " + size + " out of range");
      }
      return new BlockHandle(offset, (int) size);
    }

    private long varint(long[] at, long end, int bits) {
      long result = 0;
      for (int shift = 0; shift < bits; shift += 7) {
        if (at[0] >= end) {
          throw new IllegalStateException("truncated varint at " + at[0]);
        }
        byte b = data.get(ValueLayout.JAVA_BYTE, at[0]++);
        result |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          return result;
        }
      }
      throw new IllegalStateException("varint longer than " + bits + " bits at " + at[0]);
    }
  }

  /**
   * Decodes in place: the current key lives in a reused buffer and is copied out only when asked
   * for, so a seek that compares a dozen keys allocates nothing.
   */
  private final class ForwardIter extends Iter {
    private byte[] keyBuf = new byte[64];
    private int userKeyLen;
    private byte[] userKeyCopy;
    private int pos;

    private int readVarint() {
      int result = 0;
      for (int shift = 0; shift < 32; shift += 7) {
        if (pos >= restartsOffset) {
          throw corrupt("truncated varint in block");
        }
        byte b = byteAt(pos++);
        result |= (b & 0x7f) << shift;
        if (b >= 0) {
          if (result < 0) {
            throw corrupt("varint out of range in block");
          }
          return result;
        }
      }
      throw corrupt("varint longer than 5 bytes in block");
    }

    /** Decode the entry at {@link #pos}; the previous key stays in keyBuf for the shared prefix. */
    private void decode() {
      if (pos >= restartsOffset) {
        valid = false;
        return;
      }
      int entryStart = pos;
      int shared = readVarint();
      int unshared = readVarint();
      int vlen = readVarint();
      int keyLen = shared + unshared;
      if (keyLen < 8 || shared > userKeyLen + 8 || (long) pos + unshared + vlen > restartsOffset) {
        throw corrupt("entry at block offset " + entryStart + " overruns its block");
      }
      if (keyBuf.length < keyLen) {
        keyBuf = Arrays.copyOf(keyBuf, Math.max(keyLen, keyBuf.length * 2));
      }
      copy(pos, keyBuf, shared, unshared);
      userKeyLen = keyLen - 8;
      userKeyCopy = null;
      trailer = Varints.readFixed64(keyBuf, userKeyLen);
      valueOffset = pos + unshared;
      valueLength = vlen;
      pos = valueOffset + vlen;
      valid = true;
    }

    private int compareTo(byte[] target) {
      return Arrays.compareUnsigned(keyBuf, 0, userKeyLen, target, 0, target.length);
    }

    @Override
    byte[] userKey() {
      if (userKeyCopy == null) {
        userKeyCopy = Arrays.copyOf(keyBuf, userKeyLen);
      }
      return userKeyCopy;
    }

    @Override
    void seekToFirst() {
      pos = 0;
      userKeyLen = 0;
      decode();
    }

    private void decodeAtRestart(int i) {
      pos = restart(i);
      userKeyLen = 0;
      decode();
    }

    @Override
    void seek(byte[] target) {
      // Binary search for the last restart point whose key is < target, then scan forward.
      int lo = 0;
      int hi = restartCount - 1;
      while (lo < hi) {
        int mid = (lo + hi + 1) >>> 1;
        decodeAtRestart(mid);
        if (valid && compareTo(target) < 0) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      decodeAtRestart(lo);
      while (valid && compareTo(target) < 0) {
        decode();
      }
    }

    @Override
    void seekCeiling(byte[] target) {
      seek(target);
    }

    @Override
    void next() {
      decode();
    }
  }

  private final class ReverseIter extends Iter {
    private byte[][] keys;
    private long[] trailers;
    private int[] valueOffsets;
    private int[] valueLengths;
    private int count;
    private int index;

    private void load() {
      if (keys != null) {
        return;
      }
      ForwardIter f = new ForwardIter();
      keys = new byte[16][];
      trailers = new long[16];
      valueOffsets = new int[16];
      valueLengths = new int[16];
      for (f.seekToFirst(); f.valid; f.next()) {
        if (count == keys.length) {
          int n = count * 2;
          keys = Arrays.copyOf(keys, n);
          trailers = Arrays.copyOf(trailers, n);
          valueOffsets = Arrays.copyOf(valueOffsets, n);
          valueLengths = Arrays.copyOf(valueLengths, n);
        }
        keys[count] = f.userKey();
        trailers[count] = f.trailer;
        valueOffsets[count] = f.valueOffset;
        valueLengths[count] = f.valueLength;
        count++;
      }
    }

    @Override
    byte[] userKey() {
      return keys[index];
    }

    private void at(int i) {
      index = i;
      valid = i >= 0;
      if (valid) {
        trailer = trailers[i];
        valueOffset = valueOffsets[i];
        valueLength = valueLengths[i];
      }
    }

    @Override
    void seekToFirst() {
      load();
      at(count - 1);
    }

    @Override
    void seek(byte[] target) {
      at(ceilingIndex(target) - 1);
    }

    @Override
    void seekCeiling(byte[] target) {
      int i = ceilingIndex(target);
      at(i < count ? i : -1);
    }

    private int ceilingIndex(byte[] target) {
      load();
      int lo = 0;
      int hi = count;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (Keys.compare(keys[mid], target) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    @Override
    void next() {
      at(index - 1);
    }
  }
}
