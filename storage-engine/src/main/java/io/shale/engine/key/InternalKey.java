package io.shale.engine.key;

/**
 * A user key at a sequence number: the memtable's map key. The entry's kind lives with the value,
 * so that a later operation on the same key in the same batch replaces the earlier one.
 */
public record InternalKey(byte[] userKey, long sequence) implements Comparable<InternalKey> {
  /** The first internal key of {@code userKey}: it sorts before every version of that key. */
  public static InternalKey first(byte[] userKey) {
    return new InternalKey(userKey, Keys.MAX_SEQUENCE);
  }

  /** The first version of {@code userKey} visible at {@code sequence}. */
  public static InternalKey at(byte[] userKey, long sequence) {
    return new InternalKey(userKey, sequence);
  }

  @Override
  public int compareTo(InternalKey o) {
    return Keys.compareInternal(userKey, sequence, o.userKey, o.sequence);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InternalKey k && compareTo(k) == 0;
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(userKey) * 31 + Long.hashCode(sequence);
  }

  @Override
  public String toString() {
    return KeyFormat.printable(userKey) + "@" + sequence;
  }
}
