package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.engine.VersionedValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Answers read-only queries (get, scan pages, write pressure, leases) from the applied state. Never
 * shows the node's own records (keys beginning with byte 0). Knows nothing of Ratis: the state
 * machine decides which state is read and whether it is recent enough.
 */
public final class QueryHandler {
  /** The smallest key a client may write. */
  private static final byte[] FIRST_USER_KEY = {1};

  /** Bytes an entry costs in a page beyond its key and value (lengths and message framing). */
  static final int ENTRY_OVERHEAD = 16;

  private final long scanPageBytes;

  /**
   * @param scanPageBytes bytes of keys and values after which a scan page ends, whatever its limit
   */
  public QueryHandler(long scanPageBytes) {
    this.scanPageBytes = scanPageBytes;
  }

  /** The answer to {@code q} from {@code state}, whose applied index is {@code applied}. */
  public Reply answer(Engine state, long applied, Query q) {
    if (q instanceof Query.Get g) {
      byte[] key = CommandCodec.checkKey(g.key());
      VersionedValue v = state.getVersioned(key);
      if (v == null) {
        return Reply.Value.absent(applied);
      }
      KeyRevisions.Revision r = KeyRevisions.read(state, key);
      return r == null
          ? new Reply.Value(applied, v.value(), v.index(), v.index(), 1)
          : new Reply.Value(applied, v.value(), v.index(), r.createIndex(), r.version());
    }
    if (q instanceof Query.Pressure) {
      return new Reply.Pressure(applied, state.writePressure());
    }
    if (q instanceof Query.Lease l) {
      long ttl = LeaseRecords.ttlMillis(state, l.id());
      if (ttl < 0) {
        return new Reply.LeaseInfo(applied, l.id(), -1, -1, List.of(), false);
      }
      List<byte[]> keys = LeaseRecords.attachedKeys(state, l.id(), l.maxKeys() + 1);
      boolean more = keys.size() > l.maxKeys();
      return new Reply.LeaseInfo(
          applied, l.id(), ttl, -1, more ? keys.subList(0, l.maxKeys()) : keys, more);
    }
    if (q instanceof Query.Leases l) {
      List<LeaseRecords.Lease> found = LeaseRecords.list(state, l.after(), l.limit() + 1);
      List<long[]> out = new ArrayList<>(Math.min(found.size(), l.limit()));
      for (int i = 0; i < found.size() && i < l.limit(); i++) {
        out.add(new long[] {found.get(i).id(), found.get(i).ttlMillis()});
      }
      return new Reply.LeaseList(applied, out, found.size() > l.limit());
    }
    return scanPage(state, applied, (Query.Scan) q);
  }

  /**
   * One page of a scan: it ends at its entry limit or, whatever the limit, past {@code
   * scanPageBytes} (keys, values and {@link #ENTRY_OVERHEAD} per entry, so that a keys-only page of
   * tiny keys is bounded too) (so that a page of large values still fits a gRPC message); the
   * client continues after its last key.
   */
  private Reply scanPage(Engine state, long applied, Query.Scan s) {
    List<byte[][]> out = new ArrayList<>();
    boolean more = false;
    long bytes = 0;
    // User keys never begin with byte 0 (those are the node's records): start past them, so that
    // node records never use up the page's entry limit (QueryHandlerTest).
    byte[] start =
        Arrays.compareUnsigned(s.start(), FIRST_USER_KEY) < 0 ? FIRST_USER_KEY : s.start();
    if (s.end() != null && Arrays.compareUnsigned(s.end(), start) <= 0) {
      return new Reply.Entries(applied, out, false);
    }
    ScanOptions o =
        new ScanOptions(start, s.end(), (long) s.limit() + 1, s.reverse(), s.keysOnly());
    try (ScanIterator it = state.scan(o)) {
      while (it.next()) {
        if (it.key().length > 0 && it.key()[0] == 0) {
          continue;
        }
        if (out.size() == s.limit() || (bytes >= scanPageBytes && !out.isEmpty())) {
          more = true;
          break;
        }
        byte[] value = s.keysOnly() ? new byte[0] : it.value();
        bytes += ENTRY_OVERHEAD + it.key().length + value.length;
        out.add(new byte[][] {it.key(), value});
      }
    }
    return new Reply.Entries(applied, out, more);
  }
}
