package io.shale.node.auth;

import io.shale.node.auth.proto.StoredPermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * What a user's roles allow: key ranges it may read, key ranges it may write, and whether it may
 * administer. Ranges are [start, end) with a null end for "every key from start on"; a request's
 * range is allowed when the union of the granted ranges covers it. Immutable.
 */
public final class Grants {
  static final int READ = 0;
  static final int WRITE = 1;
  static final int READWRITE = 2;
  static final int ADMIN = 3;

  /** Nothing allowed. */
  public static final Grants NONE = new Grants(List.of(), List.of(), false);

  private record Range(byte[] start, byte[] end) {}

  private final List<Range> reads;
  private final List<Range> writes;
  private final boolean admin;

  private Grants(List<Range> reads, List<Range> writes, boolean admin) {
    this.reads = reads;
    this.writes = writes;
    this.admin = admin;
  }

  /** The grants of {@code permissions} (of all a user's roles together). */
  public static Grants of(Collection<StoredPermission> permissions) {
    List<Range> reads = new ArrayList<>();
    List<Range> writes = new ArrayList<>();
    boolean admin = false;
    for (StoredPermission p : permissions) {
      Range r =
          new Range(
              p.getStart().toByteArray(), p.getEnd().isEmpty() ? null : p.getEnd().toByteArray());
      switch (p.getType()) {
        case READ -> reads.add(r);
        case WRITE -> writes.add(r);
        case READWRITE -> {
          reads.add(r);
          writes.add(r);
        }
        case ADMIN -> admin = true;
        default -> {
          // an unknown type grants nothing
        }
      }
    }
    return new Grants(merge(reads), merge(writes), admin);
  }

  public boolean admin() {
    return admin;
  }

  /** Whether every key of [start, end) (null end: to the last key) may be read. */
  public boolean mayRead(byte[] start, byte[] end) {
    return covers(reads, start, end);
  }

  /** Whether every key of [start, end) (null end: to the last key) may be written. */
  public boolean mayWrite(byte[] start, byte[] end) {
    return covers(writes, start, end);
  }

  /** The one-key range of {@code key}: [key, key + 0x00). */
  public static byte[] after(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** Sorted by start, overlapping and touching ranges joined. */
  private static List<Range> merge(List<Range> ranges) {
    ranges.sort(Comparator.comparing(Range::start, Arrays::compareUnsigned));
    List<Range> out = new ArrayList<>();
    for (Range r : ranges) {
      Range last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null
          && (last.end() == null || Arrays.compareUnsigned(r.start(), last.end()) <= 0)) {
        byte[] end =
            last.end() == null || r.end() == null
                ? null
                : Arrays.compareUnsigned(r.end(), last.end()) > 0 ? r.end() : last.end();
        out.set(out.size() - 1, new Range(last.start(), end));
      } else {
        out.add(r);
      }
    }
    return List.copyOf(out);
  }

  private static boolean covers(List<Range> merged, byte[] start, byte[] end) {
    for (Range r : merged) {
      if (Arrays.compareUnsigned(r.start(), start) <= 0
          && (r.end() == null || (end != null && Arrays.compareUnsigned(end, r.end()) <= 0))) {
        return true;
      }
    }
    return false;
  }
}
