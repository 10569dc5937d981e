package io.shale.node.audit;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.shale.node.auth.ApiGuard;
import java.net.SocketAddress;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Records every administrative and security action on the client API in the {@link AuditLog}: each
 * call of the Cluster service's changes and of the Auth service (Authenticate included) but its
 * reads, and every call of any service refused as UNAUTHENTICATED or PERMISSION_DENIED, with its
 * outcome. The caller is the one {@link ApiGuard} named ({@link ApiGuard#CALLER}); the request is
 * summarized without values or passwords. Installed outside the guard, so it sees the guard's
 * refusals.
 */
public final class AuditTrail implements ServerInterceptor {
  /** Calls that read only: not audited unless refused. */
  private static final Set<String> READS =
      Set.of(
          "shale.v1.Cluster/Status",
          "shale.v1.Cluster/ListMembers",
          "shale.v1.Auth/WhoAmI",
          "shale.v1.Auth/UserList",
          "shale.v1.Auth/RoleList");

  private static final int MAX_SUMMARY_CHARS = 512;

  private final AuditLog log;
  private final LongSupplier clockMs;

  public AuditTrail(AuditLog log, LongSupplier clockMs) {
    this.log = log;
    this.clockMs = clockMs;
  }

  private static boolean administrative(String method) {
    return (method.startsWith("shale.v1.Cluster/") || method.startsWith("shale.v1.Auth/"))
        && !READS.contains(method);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    Object[] request = new Object[1];
    ServerCall<Q, R> audited =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            Status.Code code = status.getCode();
            if (administrative(method)
                || code == Status.Code.UNAUTHENTICATED
                || code == Status.Code.PERMISSION_DENIED) {
              ApiGuard.Caller caller = ApiGuard.CALLER.get();
              log.record(
                  clockMs.getAsLong(),
                  new AuditLog.Entry(
                      caller == null ? "" : caller.user(),
                      caller == null ? "none" : caller.authenticatedBy(),
                      remote == null ? "" : remote.toString(),
                      method,
                      summary(request[0]),
                      code.name(),
                      status.getDescription() == null ? "" : status.getDescription()));
            }
            super.close(status, trailers);
          }
        };
    ServerCall.Listener<Q> delegate = next.startCall(audited, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
      @Override
      public void onMessage(Q message) {
        request[0] = message;
        super.onMessage(message);
      }
    };
  }

  /** The request's fields on one line, without values or passwords, at most 512 characters. */
  static String summary(Object request) {
    if (!(request instanceof Message m)) {
      return "";
    }
    Message.Builder b = m.toBuilder();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.getName().equals("password")
          || f.getName().equals("value")
          || f.getName().equals("ops")) {
        if (b.hasField(f) || (f.isRepeated() && b.getRepeatedFieldCount(f) > 0)) {
          b.clearField(f);
          if (f.getType() == FieldDescriptor.Type.STRING) {
            b.setField(f, "(hidden)");
          }
        }
      }
    }
    String s = TextFormat.shortDebugString(b.build());
    return s.length() > MAX_SUMMARY_CHARS ? s.substring(0, MAX_SUMMARY_CHARS) + "..." : s;
  }
}
