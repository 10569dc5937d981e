package io.shale.client;

import io.grpc.CallCredentials;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shale.client.proto.AuthGrpc;
import io.shale.client.proto.AuthenticateRequest;
import io.shale.client.proto.AuthenticateResponse;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Calls made as a user with a password: the first call authenticates (Auth.Authenticate) and every
 * call carries the token as {@code authorization: Bearer TOKEN}; a token is replaced a minute
 * before it expires, or at once after the server refused it. The password stays in memory for that;
 * it is sent only inside TLS ({@link ShaleClient.Builder#credentials} refuses plaintext).
 */
final class PasswordCredentials extends CallCredentials {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final String AUTHENTICATE = "shale.v1.Auth/Authenticate";
  private static final long RENEW_BEFORE_MS = 60_000;

  private final String user;
  private final String password;
  private volatile Supplier<Channel> channel;
  private String token;
  private long expiresAtMs;

  PasswordCredentials(String user, String password) {
    this.user = user;
    this.password = password;
  }

  /** Where Authenticate goes: the client's preferred endpoint, known once the client is built. */
  void authenticateThrough(Supplier<Channel> channel) {
    this.channel = channel;
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
    if (info.getMethodDescriptor().getFullMethodName().equals(AUTHENTICATE)) {
      applier.apply(new Metadata());
      return;
    }
    executor.execute(
        () -> {
          try {
            Metadata md = new Metadata();
            md.put(AUTHORIZATION, "Bearer " + token());
            applier.apply(md);
          } catch (StatusRuntimeException e) {
            applier.fail(e.getStatus());
          } catch (RuntimeException e) {
            applier.fail(
                Status.UNAUTHENTICATED.withDescription("authenticating: " + e).withCause(e));
          }
        });
  }

  private synchronized String token() {
    if (token == null || System.currentTimeMillis() >= expiresAtMs - RENEW_BEFORE_MS) {
      AuthenticateResponse r =
          AuthGrpc.newBlockingStub(channel.get())
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .authenticate(
                  AuthenticateRequest.newBuilder().setName(user).setPassword(password).build());
      token = r.getToken();
      expiresAtMs = r.getExpiresAtMs();
    }
    return token;
  }
}
