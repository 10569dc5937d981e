package io.shale.node.auth;

import com.google.protobuf.ByteString;
import io.shale.client.proto.BatchRequest;
import io.shale.client.proto.Compare;
import io.shale.client.proto.CompareAndSetRequest;
import io.shale.client.proto.DeleteRangeRequest;
import io.shale.client.proto.DeleteRequest;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.Op;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.TxnOp;
import io.shale.client.proto.TxnRequest;
import io.shale.client.proto.UserChangePasswordRequest;
import io.shale.client.proto.WatchRequest;
import java.util.List;

/**
 * What one call of the client API needs of its caller, decided from the method and the request:
 * nothing (Authenticate), any user (WhoAmI, Status, ListMembers, leases: a revoke is checked
 * against the lease's keys by the Lease service), reading or writing the request's keys (KV), or
 * administration (everything else, unknown methods included). {@link #deniedTo} names what is
 * missing.
 */
public final class Requirement {
  private Requirement() {}

  /** Methods a caller without credentials may call. */
  public static boolean open(String method) {
    return method.equals("shale.v1.Auth/Authenticate");
  }

  /**
   * Why {@code user} with {@code grants} may not make this call, or null when it may.
   *
   * @param method the full gRPC method name
   * @param request the call's request message
   */
  public static String deniedTo(String user, Grants grants, String method, Object request) {
    switch (method) {
      case "shale.v1.Auth/Authenticate",
      "shale.v1.Auth/WhoAmI",
      "shale.v1.Cluster/Status",
      "shale.v1.Cluster/ListMembers",
      "shale.v1.Lease/Grant",
      "shale.v1.Lease/KeepAlive",
      "shale.v1.Lease/TimeToLive",
      "shale.v1.Lease/List":
        return null;
      case "shale.v1.Lease/Revoke":
        return null; // the service checks that the caller may write the lease's keys
      case "shale.v1.Auth/UserChangePassword":
        if (request instanceof UserChangePasswordRequest r && r.getName().equals(user)) {
          return null;
        }
        return grants.admin() ? null : user + " may change only its own password";
      default:
        break;
    }
    if (request instanceof GetRequest r) {
      return read(user, grants, r.getKey(), null);
    }
    if (request instanceof ScanRequest r) {
      return read(user, grants, r.getStart(), r.getEnd());
    }
    if (request instanceof PutRequest r) {
      return write(user, grants, r.getKey(), null);
    }
    if (request instanceof DeleteRequest r) {
      return write(user, grants, r.getKey(), null);
    }
    if (request instanceof DeleteRangeRequest r) {
      return write(user, grants, r.getStart(), r.getEnd());
    }
    if (request instanceof CompareAndSetRequest r) {
      String denied = read(user, grants, r.getKey(), null);
      return denied != null ? denied : write(user, grants, r.getKey(), null);
    }
    if (request instanceof BatchRequest r) {
      for (Op op : r.getOpsList()) {
        ByteString key = op.hasPut() ? op.getPut().getKey() : op.getDelete();
        String denied = write(user, grants, key, null);
        if (denied != null) {
          return denied;
        }
      }
      return null;
    }
    if (request instanceof TxnRequest r) {
      return txn(user, grants, r);
    }
    if (request instanceof WatchRequest r) {
      return switch (r.getKind()) {
        case KEY -> read(user, grants, r.getKey(), null);
        case PREFIX -> {
          byte[] end = io.shale.node.watch.KeyFilter.prefix(r.getKey().toByteArray()).end();
          yield read(
              user, grants, r.getKey(), end == null ? ByteString.EMPTY : ByteString.copyFrom(end));
        }
        default -> read(user, grants, r.getKey(), r.getRangeEnd());
      };
    }
    return grants.admin() ? null : user + " may not call " + method + ": it needs ADMIN";
  }

  /** A transaction reads the keys it compares and gets, writes those it puts and deletes. */
  private static String txn(String user, Grants grants, TxnRequest r) {
    for (Compare c : r.getComparesList()) {
      String denied = read(user, grants, c.getKey(), null);
      if (denied != null) {
        return denied;
      }
    }
    for (List<TxnOp> branch : List.of(r.getThenList(), r.getOtherwiseList())) {
      for (TxnOp op : branch) {
        String denied =
            switch (op.getOpCase()) {
              case PUT -> write(user, grants, op.getPut().getKey(), null);
              case DELETE -> write(user, grants, op.getDelete(), null);
              case DELETE_RANGE ->
                  write(user, grants, op.getDeleteRange().getStart(), op.getDeleteRange().getEnd());
              case GET -> read(user, grants, op.getGet(), null);
              case OP_NOT_SET -> null; // refused by the request's own checks
            };
        if (denied != null) {
          return denied;
        }
      }
    }
    return null;
  }

  /** A point key (null end) or the range [start, end), an empty end meaning to the last key. */
  private static byte[][] range(ByteString start, ByteString end) {
    byte[] s = start.toByteArray();
    if (end == null) {
      return new byte[][] {s, Grants.after(s)};
    }
    return new byte[][] {s, end.isEmpty() ? null : end.toByteArray()};
  }

  private static String read(String user, Grants grants, ByteString start, ByteString end) {
    byte[][] r = range(start, end);
    return grants.mayRead(r[0], r[1]) ? null : user + " may not read " + describe(start, end);
  }

  private static String write(String user, Grants grants, ByteString start, ByteString end) {
    byte[][] r = range(start, end);
    return grants.mayWrite(r[0], r[1]) ? null : user + " may not write " + describe(start, end);
  }

  private static String describe(ByteString start, ByteString end) {
    return end == null
        ? "key " + printable(start)
        : "[" + printable(start) + ", " + (end.isEmpty() ? "end" : printable(end)) + ")";
  }

  private static String printable(ByteString b) {
    String s = b.size() > 64 ? b.substring(0, 64).toStringUtf8() + "..." : b.toStringUtf8();
    return "\"" + s.replaceAll("\\p{Cntrl}", "?") + "\"";
  }
}
