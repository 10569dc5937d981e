package io.shale.node.statemachine;

import io.shale.engine.Engine;
import java.nio.ByteBuffer;

/**
 * A user key's revisions besides the modification index the engine keeps with its value: the index
 * of the entry that created it (its first put since it last did not exist), its version (puts since
 * then: 1 after the first), etcd's create_revision and version, and the lease it is attached to (0:
 * none). Kept as node records,
 *
 * <pre>
 *   \0v{key} -> create index:int64, version:int64, [lease id:int64 when not 0]
 * </pre>
 *
 * written in the same engine batch as the key itself, so they are exactly as durable as the value
 * and travel in snapshots with it. Only {@link EntryView} writes them.
 *
 * <p>A key whose record is missing while its value exists was written before revisions were kept:
 * it reads as created by its last write, version 1, no lease, and its next put starts it afresh.
 */
final class KeyRevisions {
  private static final byte[] PREFIX = {0, 'v'};

  /** Where a key's record lies in the engine. */
  static byte[] recordKey(byte[] key) {
    byte[] k = new byte[PREFIX.length + key.length];
    System.arraycopy(PREFIX, 0, k, 0, PREFIX.length);
    System.arraycopy(key, 0, k, PREFIX.length, key.length);
    return k;
  }

  /** A live key's create index, version and lease (0: none). */
  record Revision(long createIndex, long version, long lease) {
    /**
     * The revision after a put at {@code index}, attached to {@code lease}, of a key whose revision
     * was {@code prior}.
     */
    static Revision afterPut(Revision prior, long index, long lease) {
      return prior == null
          ? new Revision(index, 1, lease)
          : new Revision(prior.createIndex, prior.version + 1, lease);
    }

    byte[] encode() {
      ByteBuffer b =
          ByteBuffer.allocate(lease == 0 ? 16 : 24).putLong(createIndex).putLong(version);
      if (lease != 0) {
        b.putLong(lease);
      }
      return b.array();
    }
  }

  private KeyRevisions() {}

  /** The stored revision of {@code key}, or null if it has none (absent, or written before). */
  static Revision read(Engine state, byte[] key) {
    byte[] r = state.get(recordKey(key));
    if (r == null) {
      return null;
    }
    if (r.length != 16 && r.length != 24) {
      throw new IllegalStateException(
          "revision record of a key holds " + r.length + " bytes, not 16 or 24");
    }
    ByteBuffer b = ByteBuffer.wrap(r);
    return new Revision(b.getLong(), b.getLong(), r.length == 24 ? b.getLong() : 0);
  }
}
