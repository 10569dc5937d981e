package io.shale.engine.memtable;

import io.shale.engine.concurrent.RefCount;
import io.shale.engine.key.StoredValue;
import io.shale.engine.version.Version;
import java.util.List;

/**
 * What a reader needs to see the database: the mutable memtable, the sealed ones waiting for flush
 * (newest first) and the version. Immutable; replaced whenever a memtable is sealed or a version
 * installed. Reference counted, and holds one reference to its version and to each of its
 * memtables, so that a read that started on it can finish even after newer states replaced it.
 */
public final class ReadState {
  private final Memtable mutable;
  private final List<Memtable> immutablesNewestFirst;
  private final Version version;
  private final RefCount refs = new RefCount();

  /** Precondition: the caller has retained {@code version} for this state. */
  ReadState(Memtable mutable, List<Memtable> immutablesNewestFirst, Version version) {
    this.mutable = mutable;
    this.immutablesNewestFirst = List.copyOf(immutablesNewestFirst);
    this.version = version;
    mutable.retain();
    this.immutablesNewestFirst.forEach(Memtable::retain);
  }

  public Memtable mutable() {
    return mutable;
  }

  public List<Memtable> immutablesNewestFirst() {
    return immutablesNewestFirst;
  }

  public Version version() {
    return version;
  }

  /**
   * The newest version of {@code key} at {@code sequence} in the memtables (mutable first), as a
   * copy the caller owns; null if no memtable holds one.
   */
  public StoredValue getFromMemtables(byte[] key, long sequence) {
    StoredValue v = mutable.get(key, sequence);
    if (v == null) {
      for (Memtable m : immutablesNewestFirst) {
        v = m.get(key, sequence);
        if (v != null) {
          break;
        }
      }
    }
    return v;
  }

  /** Take a reference; false if the state was already freed (then retry on a newer one). */
  public boolean tryRetain() {
    return refs.tryRetain();
  }

  public void release() {
    if (refs.release("read state")) {
      version.release();
      mutable.release();
      immutablesNewestFirst.forEach(Memtable::release);
    }
  }
}
