package io.shale.engine;

import io.shale.engine.memtable.Memtable;
import io.shale.engine.version.Version;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a reader needs to see the database: the mutable memtable, the sealed ones waiting for
 * flush (newest first) and the version. Immutable; replaced whenever a memtable is sealed or a
 * version installed. Reference counted, and holds one reference to its version, so that a read
 * that started on it can finish even after newer states replaced it.
 */
final class ReadState {
  final Memtable mutable;
  final List<Memtable> immutablesNewestFirst;
  final Version version;
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Precondition: the caller has retained {@code version} for this state. */
  ReadState(Memtable mutable, List<Memtable> immutablesNewestFirst, Version version) {
    this.mutable = mutable;
    this.immutablesNewestFirst = List.copyOf(immutablesNewestFirst);
    this.version = version;
  }

  boolean tryRetain() {
    while (true) {
      int r = refs.get();
      if (r <= 0) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  void release() {
    int r = refs.decrementAndGet();
    if (r == 0) {
      version.release();
    } else if (r < 0) {
      throw new IllegalStateException("read state released more often than retained");
    }
  }
}
