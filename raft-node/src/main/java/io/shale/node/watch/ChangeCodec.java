package io.shale.node.watch;

import io.shale.node.statemachine.KeyChange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The in-memory form of one applied entry's changes in the {@link ChangeHistory}: a single byte
 * array, so that a held entry costs one array header and no object per change. Never written to
 * disk or sent, so the layout may change freely.
 *
 * <p>Layout: the entry's index (8 bytes, big-endian, so the history can binary-search it), then
 * each change in order:
 *
 * <pre>
 *   flags        1 byte: {@link #DELETE} (value null), {@link #PREVIOUS} (previous present)
 *   key          varint length, bytes
 *   value        varint length, bytes                        (puts only)
 *   createIndex  varlong: index - createIndex for a put (0 for a key the entry created),
 *                         createIndex itself for a delete (0 by contract)
 *   version      varlong
 *   previous     varint length, value bytes; varlongs index - modIndex, index - createIndex,
 *                version                                     (when PREVIOUS)
 * </pre>
 *
 * Varlongs take the 64 bits as unsigned (LEB128), so every long round-trips, a negative one in 10
 * bytes; differences wrap around exactly as they were taken.
 */
final class ChangeCodec {
  private static final int DELETE = 1;
  private static final int PREVIOUS = 2;

  /** Bytes before the first change: the entry's index. */
  private static final int INDEX_BYTES = 8;

  private ChangeCodec() {}

  /** Entry {@code index}'s {@code changes} as one exactly sized array. */
  static byte[] encode(long index, List<KeyChange> changes) {
    int size = INDEX_BYTES;
    for (KeyChange c : changes) {
      size += encodedSize(index, c);
    }
    Writer w = new Writer(new byte[size]);
    for (int shift = 56; shift >= 0; shift -= 8) {
      w.out[w.pos++] = (byte) (index >>> shift);
    }
    for (KeyChange c : changes) {
      w.change(index, c);
    }
    if (w.pos != size) {
      throw new IllegalStateException("encoded " + w.pos + " bytes, sized " + size);
    }
    return w.out;
  }

  /** The index of the entry {@code encoded} holds. */
  static long index(byte[] encoded) {
    long index = 0;
    for (int i = 0; i < INDEX_BYTES; i++) {
      index = (index << 8) | (encoded[i] & 0xff);
    }
    return index;
  }

  /** The changes in {@code encoded} whose keys {@code filter} accepts, in order. */
  static List<KeyChange> decode(byte[] encoded, KeyFilter filter) {
    long index = index(encoded);
    Reader r = new Reader(encoded, INDEX_BYTES);
    List<KeyChange> out = new ArrayList<>();
    while (r.pos < encoded.length) {
      int flags = encoded[r.pos++];
      byte[] key = r.bytes();
      if (filter.accepts(key)) {
        out.add(r.change(index, flags, key));
      } else {
        r.skipChange(flags);
      }
    }
    return out;
  }

  private static int encodedSize(long index, KeyChange c) {
    int size = 1 + bytesSize(c.key());
    if (c.isDelete()) {
      size += varlongSize(c.createIndex());
    } else {
      size += bytesSize(c.value()) + varlongSize(index - c.createIndex());
    }
    size += varlongSize(c.version());
    KeyChange.Previous p = c.previous();
    if (p != null) {
      size +=
          bytesSize(p.value())
              + varlongSize(index - p.modIndex())
              + varlongSize(index - p.createIndex())
              + varlongSize(p.version());
    }
    return size;
  }

  private static int bytesSize(byte[] b) {
    return varlongSize(b.length) + b.length;
  }

  private static int varlongSize(long v) {
    int size = 1;
    while ((v & ~0x7fL) != 0) {
      v >>>= 7;
      size++;
    }
    return size;
  }

  private static final class Writer {
    final byte[] out;
    int pos;

    Writer(byte[] out) {
      this.out = out;
    }

    void change(long index, KeyChange c) {
      KeyChange.Previous p = c.previous();
      out[pos++] = (byte) ((c.isDelete() ? DELETE : 0) | (p != null ? PREVIOUS : 0));
      bytes(c.key());
      if (c.isDelete()) {
        varlong(c.createIndex());
      } else {
        bytes(c.value());
        varlong(index - c.createIndex());
      }
      varlong(c.version());
      if (p != null) {
        bytes(p.value());
        varlong(index - p.modIndex());
        varlong(index - p.createIndex());
        varlong(p.version());
      }
    }

    void bytes(byte[] b) {
      varlong(b.length);
      System.arraycopy(b, 0, out, pos, b.length);
      pos += b.length;
    }

    void varlong(long v) {
      while ((v & ~0x7fL) != 0) {
        out[pos++] = (byte) ((v & 0x7f) | 0x80);
        v >>>= 7;
      }
      out[pos++] = (byte) v;
    }
  }

  private static final class Reader {
    final byte[] in;
    int pos;

    Reader(byte[] in, int pos) {
      this.in = in;
      this.pos = pos;
    }

    /** The rest of a change after its flags and key. */
    KeyChange change(long index, int flags, byte[] key) {
      byte[] value;
      long createIndex;
      if ((flags & DELETE) != 0) {
        value = null;
        createIndex = varlong();
      } else {
        value = bytes();
        createIndex = index - varlong();
      }
      long version = varlong();
      KeyChange.Previous previous = null;
      if ((flags & PREVIOUS) != 0) {
        byte[] prevValue = bytes();
        long modIndex = index - varlong();
        long prevCreateIndex = index - varlong();
        previous = new KeyChange.Previous(prevValue, modIndex, prevCreateIndex, varlong());
      }
      return new KeyChange(key, value, createIndex, version, previous);
    }

    /** Past the rest of a change after its flags and key. */
    void skipChange(int flags) {
      if ((flags & DELETE) == 0) {
        skipBytes();
      }
      varlong();
      varlong();
      if ((flags & PREVIOUS) != 0) {
        skipBytes();
        varlong();
        varlong();
        varlong();
      }
    }

    byte[] bytes() {
      int length = (int) varlong();
      byte[] b = Arrays.copyOfRange(in, pos, pos + length);
      pos += length;
      return b;
    }

    void skipBytes() {
      int length = (int) varlong();
      pos += length;
    }

    long varlong() {
      long v = 0;
      for (int shift = 0; ; shift += 7) {
        byte b = in[pos++];
        v |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          return v;
        }
      }
    }
  }
}
