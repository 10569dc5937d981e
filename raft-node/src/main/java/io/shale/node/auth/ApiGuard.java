package io.shale.node.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.shale.node.transport.PeerTls;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Names the caller of every call on the client API port and refuses what it may not do. The caller
 * is the user a bearer token names ({@code authorization: Bearer TOKEN}, checked against the token
 * key), else the subject CN of the client certificate the TLS handshake verified; a call with
 * neither is UNAUTHENTICATED unless it is open ({@link Requirement#open}), one from a user that
 * does not exist is UNAUTHENTICATED, and one its grants do not cover is PERMISSION_DENIED naming
 * what is missing ({@link Requirement#deniedTo}). Grants are read from the applied state at each
 * call, so a change takes effect as soon as this node applies it.
 *
 * <p>The caller travels with the call in {@link #CALLER} for the services that need it.
 */
public final class ApiGuard implements ServerInterceptor {
  /** Who made the call in progress; null for an open call made without credentials. */
  public static final Context.Key<Caller> CALLER = Context.key("shale-caller");

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** A caller: its user name and what proved it ("certificate" or "token"). */
  public record Caller(String user, String authenticatedBy) {}

  /** The longest a refusal waits for this node to apply what the leader has committed. */
  private static final long CATCH_UP_WAIT_MS = 2_000;

  private final Supplier<AuthState> state;
  private final LongSupplier clockMs;
  private final Supplier<CompletableFuture<?>> catchUp;

  /**
   * @param state users, roles and the token key as last applied on this node
   * @param clockMs the time tokens' expiry is checked against
   */
  public ApiGuard(Supplier<AuthState> state, LongSupplier clockMs) {
    this(state, clockMs, null);
  }

  /**
   * @param catchUp completes once this node has applied every entry the leader had committed when
   *     it was called (a read index): before refusing a caller, the guard waits for it and decides
   *     again, so a grant or a new user that another node already answered for counts here too
   *     (null: refusals are decided on this node's state as it is)
   */
  public ApiGuard(
      Supplier<AuthState> state, LongSupplier clockMs, Supplier<CompletableFuture<?>> catchUp) {
    this.state = state;
    this.clockMs = clockMs;
    this.catchUp = catchUp;
  }

  /** This node's state once it has caught up with the leader (or as it is, if that fails). */
  private AuthState caughtUp() {
    if (catchUp != null) {
      try {
        catchUp.get().get(CATCH_UP_WAIT_MS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException | RuntimeException e) {
        // No leader reachable in time: decide on what this node has.
      }
    }
    return state.get();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    AuthState auth = state.get();
    Caller caller;
    try {
      caller = identify(call, headers, auth);
    } catch (IllegalArgumentException refused) {
      return refuse(call, Status.UNAUTHENTICATED.withDescription(refused.getMessage()));
    }
    if (caller == null) {
      if (!Requirement.open(method)) {
        return refuse(
            call,
            Status.UNAUTHENTICATED.withDescription(
                "no credentials: present a client certificate of the cluster's CA or a token"
                    + " from Auth.Authenticate"));
      }
      return next.startCall(call, headers);
    }
    Grants known = auth.grants(caller.user());
    if (known == null) {
      known = caughtUp().grants(caller.user());
    }
    Grants grants = known;
    if (grants == null) {
      return refuse(
          call, Status.UNAUTHENTICATED.withDescription("there is no user " + caller.user()));
    }
    ServerCall.Listener<Q> delegate =
        Contexts.interceptCall(Context.current().withValue(CALLER, caller), call, headers, next);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        if (refused) {
          return;
        }
        String denied = Requirement.deniedTo(caller.user(), grants, method, message);
        if (denied != null) {
          Grants now = caughtUp().grants(caller.user());
          denied =
              now == null
                  ? "there is no user " + caller.user()
                  : Requirement.deniedTo(caller.user(), now, method, message);
        }
        if (denied != null) {
          refused = true;
          String reason = denied;
          // In the caller's context, so that the audit trail outside names who was refused.
          Context.current()
              .withValue(CALLER, caller)
              .run(
                  () ->
                      call.close(Status.PERMISSION_DENIED.withDescription(reason), new Metadata()));
          return;
        }
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }
    };
  }

  /**
   * The caller of {@code call}, or null when it presented nothing.
   *
   * @throws IllegalArgumentException when a token was presented but is not valid
   */
  private Caller identify(ServerCall<?, ?> call, Metadata headers, AuthState auth) {
    String authorization = headers.get(AUTHORIZATION);
    if (authorization != null) {
      if (!authorization.startsWith("Bearer ")) {
        throw new IllegalArgumentException("the authorization header must be \"Bearer TOKEN\"");
      }
      byte[] key = auth.tokenKey();
      String user =
          key == null
              ? null
              : Tokens.verify(
                  key, authorization.substring("Bearer ".length()), clockMs.getAsLong());
      if (user == null) {
        throw new IllegalArgumentException(
            "the token is not valid or has expired: authenticate again");
      }
      return new Caller(user, "token");
    }
    SSLSession tls = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
    if (tls == null) {
      return null;
    }
    try {
      Certificate[] chain = tls.getPeerCertificates();
      if (chain.length > 0 && chain[0] instanceof X509Certificate leaf) {
        String cn = PeerTls.commonName(leaf);
        return cn.isEmpty() ? null : new Caller(cn, "certificate");
      }
      return null;
    } catch (SSLPeerUnverifiedException noCertificate) {
      return null;
    }
  }

  private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, Status status) {
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }
}
