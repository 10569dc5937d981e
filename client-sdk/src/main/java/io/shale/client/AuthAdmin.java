package io.shale.client;

import com.google.protobuf.ByteString;
import io.shale.client.proto.AuthGrpc;
import io.shale.client.proto.Permission;
import io.shale.client.proto.Role;
import io.shale.client.proto.RoleAddRequest;
import io.shale.client.proto.RoleDeleteRequest;
import io.shale.client.proto.RoleListRequest;
import io.shale.client.proto.RolePermissionRequest;
import io.shale.client.proto.User;
import io.shale.client.proto.UserAddRequest;
import io.shale.client.proto.UserChangePasswordRequest;
import io.shale.client.proto.UserDeleteRequest;
import io.shale.client.proto.UserListRequest;
import io.shale.client.proto.UserRoleRequest;
import io.shale.client.proto.WhoAmIRequest;
import io.shale.client.proto.WhoAmIResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Users, roles and permissions (etcd's Auth client): obtained from {@link ShaleClient#auth()};
 * thread-safe. Changes need a caller with the ADMIN permission (the user root has it), except that
 * a user may change its own password; they go through the Raft log, so every node enforces them,
 * and are tried once (a repeated grant would be harmless, a repeated delete would fail). The
 * messages are those of {@code shale/v1/auth.proto}.
 */
public final class AuthAdmin {
  private final RetryingCall.Settings settings;
  private final RetryingCall.Settings once;

  AuthAdmin(RetryingCall.Settings settings) {
    this.settings = settings;
    this.once = settings.singleAttempt();
  }

  private static AuthGrpc.AuthFutureStub stub(io.grpc.Channel ch, long timeoutMillis) {
    return AuthGrpc.newFutureStub(ch).withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /** A permission of {@code type} on every key that starts with {@code prefix}. */
  public static Permission prefix(Permission.Type type, byte[] prefix) {
    Permission.Builder p =
        Permission.newBuilder().setType(type).setStart(ByteString.copyFrom(prefix));
    byte[] end = ShaleClient.prefixEnd(prefix);
    if (end != null) {
      p.setEnd(ByteString.copyFrom(end));
    }
    return p.build();
  }

  /** A permission of {@code type} on the keys in [start, end); a null end: every key from start. */
  public static Permission range(Permission.Type type, byte[] start, byte[] end) {
    Permission.Builder p =
        Permission.newBuilder().setType(type).setStart(ByteString.copyFrom(start));
    if (end != null) {
      p.setEnd(ByteString.copyFrom(end));
    }
    return p.build();
  }

  /** The ADMIN permission: the Cluster service and user and role management. */
  public static Permission admin() {
    return Permission.newBuilder().setType(Permission.Type.ADMIN).build();
  }

  /** Who the cluster takes this client for, and its permissions. */
  public CompletableFuture<WhoAmIResponse> whoAmIAsync() {
    return RetryingCall.start(
        settings, "whoAmI", (ch, t) -> stub(ch, t).whoAmI(WhoAmIRequest.getDefaultInstance()));
  }

  public WhoAmIResponse whoAmI() {
    return ShaleClient.join(whoAmIAsync());
  }

  /** Adds user {@code name}; a null or empty password: it authenticates by certificate only. */
  public CompletableFuture<Void> addUserAsync(String name, String password) {
    UserAddRequest req =
        UserAddRequest.newBuilder()
            .setName(name)
            .setPassword(password == null ? "" : password)
            .build();
    return RetryingCall.start(once, "userAdd", (ch, t) -> stub(ch, t).userAdd(req))
        .thenApply(r -> null);
  }

  public void addUser(String name, String password) {
    ShaleClient.join(addUserAsync(name, password));
  }

  public CompletableFuture<Void> deleteUserAsync(String name) {
    UserDeleteRequest req = UserDeleteRequest.newBuilder().setName(name).build();
    return RetryingCall.start(once, "userDelete", (ch, t) -> stub(ch, t).userDelete(req))
        .thenApply(r -> null);
  }

  public void deleteUser(String name) {
    ShaleClient.join(deleteUserAsync(name));
  }

  /** Sets user {@code name}'s password; null or empty removes it. */
  public CompletableFuture<Void> changePasswordAsync(String name, String password) {
    UserChangePasswordRequest req =
        UserChangePasswordRequest.newBuilder()
            .setName(name)
            .setPassword(password == null ? "" : password)
            .build();
    return RetryingCall.start(
            once, "userChangePassword", (ch, t) -> stub(ch, t).userChangePassword(req))
        .thenApply(r -> null);
  }

  public void changePassword(String name, String password) {
    ShaleClient.join(changePasswordAsync(name, password));
  }

  public CompletableFuture<Void> grantRoleAsync(String user, String role) {
    UserRoleRequest req = UserRoleRequest.newBuilder().setName(user).setRole(role).build();
    return RetryingCall.start(once, "userGrantRole", (ch, t) -> stub(ch, t).userGrantRole(req))
        .thenApply(r -> null);
  }

  public void grantRole(String user, String role) {
    ShaleClient.join(grantRoleAsync(user, role));
  }

  public CompletableFuture<Void> revokeRoleAsync(String user, String role) {
    UserRoleRequest req = UserRoleRequest.newBuilder().setName(user).setRole(role).build();
    return RetryingCall.start(once, "userRevokeRole", (ch, t) -> stub(ch, t).userRevokeRole(req))
        .thenApply(r -> null);
  }

  public void revokeRole(String user, String role) {
    ShaleClient.join(revokeRoleAsync(user, role));
  }

  public CompletableFuture<List<User>> usersAsync() {
    return RetryingCall.start(
            settings,
            "userList",
            (ch, t) -> stub(ch, t).userList(UserListRequest.getDefaultInstance()))
        .thenApply(r -> r.getUsersList());
  }

  public List<User> users() {
    return ShaleClient.join(usersAsync());
  }

  public CompletableFuture<Void> addRoleAsync(String name) {
    RoleAddRequest req = RoleAddRequest.newBuilder().setName(name).build();
    return RetryingCall.start(once, "roleAdd", (ch, t) -> stub(ch, t).roleAdd(req))
        .thenApply(r -> null);
  }

  public void addRole(String name) {
    ShaleClient.join(addRoleAsync(name));
  }

  /** Deletes role {@code name} and takes it from every user who has it. */
  public CompletableFuture<Void> deleteRoleAsync(String name) {
    RoleDeleteRequest req = RoleDeleteRequest.newBuilder().setName(name).build();
    return RetryingCall.start(once, "roleDelete", (ch, t) -> stub(ch, t).roleDelete(req))
        .thenApply(r -> null);
  }

  public void deleteRole(String name) {
    ShaleClient.join(deleteRoleAsync(name));
  }

  public CompletableFuture<Void> grantPermissionAsync(String role, Permission p) {
    RolePermissionRequest req =
        RolePermissionRequest.newBuilder().setRole(role).setPermission(p).build();
    return RetryingCall.start(
            once, "roleGrantPermission", (ch, t) -> stub(ch, t).roleGrantPermission(req))
        .thenApply(r -> null);
  }

  public void grantPermission(String role, Permission p) {
    ShaleClient.join(grantPermissionAsync(role, p));
  }

  public CompletableFuture<Void> revokePermissionAsync(String role, Permission p) {
    RolePermissionRequest req =
        RolePermissionRequest.newBuilder().setRole(role).setPermission(p).build();
    return RetryingCall.start(
            once, "roleRevokePermission", (ch, t) -> stub(ch, t).roleRevokePermission(req))
        .thenApply(r -> null);
  }

  public void revokePermission(String role, Permission p) {
    ShaleClient.join(revokePermissionAsync(role, p));
  }

  public CompletableFuture<List<Role>> rolesAsync() {
    return RetryingCall.start(
            settings,
            "roleList",
            (ch, t) -> stub(ch, t).roleList(RoleListRequest.getDefaultInstance()))
        .thenApply(r -> r.getRolesList());
  }

  public List<Role> roles() {
    return ShaleClient.join(rolesAsync());
  }
}
