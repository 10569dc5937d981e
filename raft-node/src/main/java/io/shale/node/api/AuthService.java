package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.shale.client.proto.AuthChangeResponse;
import io.shale.client.proto.AuthGrpc;
import io.shale.client.proto.AuthenticateRequest;
import io.shale.client.proto.AuthenticateResponse;
import io.shale.client.proto.Permission;
import io.shale.client.proto.ResponseHeader;
import io.shale.client.proto.Role;
import io.shale.client.proto.RoleAddRequest;
import io.shale.client.proto.RoleDeleteRequest;
import io.shale.client.proto.RoleListRequest;
import io.shale.client.proto.RoleListResponse;
import io.shale.client.proto.RolePermissionRequest;
import io.shale.client.proto.User;
import io.shale.client.proto.UserAddRequest;
import io.shale.client.proto.UserChangePasswordRequest;
import io.shale.client.proto.UserDeleteRequest;
import io.shale.client.proto.UserListRequest;
import io.shale.client.proto.UserListResponse;
import io.shale.client.proto.UserRoleRequest;
import io.shale.client.proto.WhoAmIRequest;
import io.shale.client.proto.WhoAmIResponse;
import io.shale.node.auth.ApiGuard;
import io.shale.node.auth.AuthApplier;
import io.shale.node.auth.AuthState;
import io.shale.node.auth.PasswordHashes;
import io.shale.node.auth.Tokens;
import io.shale.node.auth.proto.AuthChange;
import io.shale.node.auth.proto.RolePermission;
import io.shale.node.auth.proto.StoredPermission;
import io.shale.node.auth.proto.StoredRole;
import io.shale.node.auth.proto.StoredUser;
import io.shale.node.auth.proto.UserRole;
import io.shale.node.ratis.ForwardingClient;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Reply;
import io.shale.node.statemachine.ShaleStateMachine;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.ratis.server.RaftServer;

/**
 * The public Auth API of one node (shale.v1.Auth). Changes to users and roles go through the Raft
 * log as {@link Command.Auth} entries, so every node enforces the same rules; a password is hashed
 * here, before its entry is proposed (applying must be deterministic, salts are random). Who may
 * call what is {@link ApiGuard}'s job; this service trusts the caller it is given.
 */
public final class AuthService extends AuthGrpc.AuthImplBase {
  private static final SecureRandom KEYS = new SecureRandom();

  /** How long a change waits for this node to apply it after the leader has. */
  private static final Duration APPLY_WAIT = Duration.ofSeconds(10);

  private final RaftServer.Division division;
  private final ShaleStateMachine stateMachine;
  private final RaftSubmitter submitter;
  private final Duration tokenTtl;
  private final LongSupplier clockMs;

  /**
   * @param raft the node's Ratis client, for entries proposed while another node leads
   * @param tokenTtl how long a token from Authenticate is valid
   */
  public AuthService(
      RaftServer.Division division,
      ShaleStateMachine stateMachine,
      ForwardingClient raft,
      MeterRegistry registry,
      Duration tokenTtl,
      LongSupplier clockMs) {
    this.division = division;
    this.stateMachine = stateMachine;
    this.submitter =
        new RaftSubmitter(
            division,
            stateMachine,
            raft,
            new StatusMapper(division.getId().toString(), registry),
            false,
            java.util.concurrent.ForkJoinPool.commonPool());
    this.tokenTtl = tokenTtl;
    this.clockMs = clockMs;
  }

  /**
   * Proposes a token key when the applied state has none (the first proposal to apply wins; later
   * ones change nothing). Called when this node becomes leader, and by Authenticate.
   */
  public void ensureTokenKey() throws StatusException {
    if (stateMachine.authState().tokenKey() == null) {
      byte[] key = new byte[32];
      KEYS.nextBytes(key);
      change(AuthChange.newBuilder().setTokenKey(ByteString.copyFrom(key)).build());
    }
  }

  private ResponseHeader header(long appliedIndex) {
    return ResponseHeaders.of(division, appliedIndex);
  }

  /**
   * One change through the log: its applied index, or FAILED_PRECONDITION saying why not. Answers
   * once this node has applied it too, so that the caller's next call here sees it.
   */
  private long change(AuthChange change) throws StatusException {
    Reply r = submitter.write(new Command.Auth(change));
    if (r instanceof Reply.Rejected rejected) {
      throw Status.FAILED_PRECONDITION.withDescription(rejected.message()).asException();
    }
    try {
      stateMachine.applied(r.appliedIndex()).get(APPLY_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").asException();
    } catch (ExecutionException | TimeoutException e) {
      throw Status.UNAVAILABLE
          .withDescription(
              "the change applied at index "
                  + r.appliedIndex()
                  + " but this node has not applied it within "
                  + APPLY_WAIT.toSeconds()
                  + " s")
          .asException();
    }
    return r.appliedIndex();
  }

  private interface Call<T> {
    T run() throws StatusException;
  }

  private static <T> void answer(StreamObserver<T> out, Call<T> call) {
    T response;
    try {
      response = call.run();
    } catch (StatusException e) {
      out.onError(e);
      return;
    } catch (IllegalArgumentException e) {
      out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException());
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  private AuthChangeResponse changed(AuthChange change) throws StatusException {
    return AuthChangeResponse.newBuilder().setHeader(header(change(change))).build();
  }

  private static String checkedName(String kind, String name) {
    String bad = AuthApplier.nameProblem(kind, name);
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    return name;
  }

  @Override
  public void authenticate(AuthenticateRequest req, StreamObserver<AuthenticateResponse> out) {
    answer(
        out,
        () -> {
          StoredUser u = stateMachine.authState().user(req.getName());
          // The same answer, after the same work, whether the user is missing, has no password
          // or gave the wrong one: neither the reply nor its time tells user names apart.
          boolean matches =
              PasswordHashes.matches(
                  req.getPassword(),
                  u != null && u.hasPassword() ? u.getPassword() : PasswordHashes.DECOY);
          if (u == null || !u.hasPassword() || !matches) {
            throw Status.UNAUTHENTICATED
                .withDescription("wrong user name or password")
                .asException();
          }
          ensureTokenKey();
          AuthState auth = stateMachine.authState();
          if (auth.tokenKey() == null) {
            throw Status.UNAVAILABLE
                .withDescription("this node has not applied the token key yet; retry")
                .asException();
          }
          long expires = clockMs.getAsLong() + tokenTtl.toMillis();
          return AuthenticateResponse.newBuilder()
              .setHeader(header(division.getInfo().getLastAppliedIndex()))
              .setToken(Tokens.issue(auth.tokenKey(), u.getName(), expires))
              .setExpiresAtMs(expires)
              .build();
        });
  }

  @Override
  public void whoAmI(WhoAmIRequest req, StreamObserver<WhoAmIResponse> out) {
    answer(
        out,
        () -> {
          ApiGuard.Caller caller = ApiGuard.CALLER.get();
          WhoAmIResponse.Builder b =
              WhoAmIResponse.newBuilder()
                  .setHeader(header(division.getInfo().getLastAppliedIndex()))
                  .setAuthenticatedBy("none");
          if (caller != null) {
            b.setUser(caller.user()).setAuthenticatedBy(caller.authenticatedBy());
            AuthState auth = stateMachine.authState();
            StoredUser u = auth.user(caller.user());
            if (u != null) {
              for (String r : u.getRolesList()) {
                StoredRole role = auth.role(r);
                if (role != null) {
                  role.getPermissionsList().forEach(p -> b.addPermissions(permission(p)));
                }
              }
            }
          }
          return b.build();
        });
  }

  @Override
  public void userAdd(UserAddRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(
        out,
        () -> {
          StoredUser.Builder u =
              StoredUser.newBuilder().setName(checkedName("user", req.getName()));
          if (!req.getPassword().isEmpty()) {
            u.setPassword(PasswordHashes.hash(req.getPassword()));
          }
          return changed(AuthChange.newBuilder().setUserAdd(u).build());
        });
  }

  @Override
  public void userDelete(UserDeleteRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setUserDelete(req.getName()).build()));
  }

  @Override
  public void userChangePassword(
      UserChangePasswordRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(
        out,
        () -> {
          StoredUser.Builder u = StoredUser.newBuilder().setName(req.getName());
          if (!req.getPassword().isEmpty()) {
            u.setPassword(PasswordHashes.hash(req.getPassword()));
          }
          return changed(AuthChange.newBuilder().setUserPassword(u).build());
        });
  }

  @Override
  public void userGrantRole(UserRoleRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setUserGrantRole(userRole(req)).build()));
  }

  @Override
  public void userRevokeRole(UserRoleRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setUserRevokeRole(userRole(req)).build()));
  }

  private static UserRole userRole(UserRoleRequest req) {
    return UserRole.newBuilder().setUser(req.getName()).setRole(req.getRole()).build();
  }

  @Override
  public void userList(UserListRequest req, StreamObserver<UserListResponse> out) {
    answer(
        out,
        () -> {
          UserListResponse.Builder b =
              UserListResponse.newBuilder()
                  .setHeader(header(division.getInfo().getLastAppliedIndex()));
          for (StoredUser u : stateMachine.authState().users()) {
            b.addUsers(
                User.newBuilder()
                    .setName(u.getName())
                    .addAllRoles(u.getRolesList())
                    .setHasPassword(u.hasPassword()));
          }
          return b.build();
        });
  }

  @Override
  public void roleAdd(RoleAddRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(
        out,
        () ->
            changed(
                AuthChange.newBuilder().setRoleAdd(checkedName("role", req.getName())).build()));
  }

  @Override
  public void roleDelete(RoleDeleteRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setRoleDelete(req.getName()).build()));
  }

  @Override
  public void roleGrantPermission(
      RolePermissionRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setRoleGrant(rolePermission(req)).build()));
  }

  @Override
  public void roleRevokePermission(
      RolePermissionRequest req, StreamObserver<AuthChangeResponse> out) {
    answer(out, () -> changed(AuthChange.newBuilder().setRoleRevoke(rolePermission(req)).build()));
  }

  private static RolePermission rolePermission(RolePermissionRequest req) {
    return RolePermission.newBuilder()
        .setRole(req.getRole())
        .setPermission(stored(req.getPermission()))
        .build();
  }

  @Override
  public void roleList(RoleListRequest req, StreamObserver<RoleListResponse> out) {
    answer(
        out,
        () -> {
          RoleListResponse.Builder b =
              RoleListResponse.newBuilder()
                  .setHeader(header(division.getInfo().getLastAppliedIndex()));
          for (StoredRole r : stateMachine.authState().roles()) {
            Role.Builder role = Role.newBuilder().setName(r.getName());
            r.getPermissionsList().forEach(p -> role.addPermissions(permission(p)));
            b.addRoles(role);
          }
          return b.build();
        });
  }

  private static StoredPermission stored(Permission p) {
    StoredPermission s =
        StoredPermission.newBuilder()
            .setType(p.getTypeValue())
            .setStart(p.getStart())
            .setEnd(p.getEnd())
            .build();
    String bad = AuthApplier.permissionProblem(s);
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    return s;
  }

  private static Permission permission(StoredPermission p) {
    return Permission.newBuilder()
        .setTypeValue(p.getType())
        .setStart(p.getStart())
        .setEnd(p.getEnd())
        .build();
  }
}
