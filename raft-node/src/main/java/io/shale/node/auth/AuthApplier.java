package io.shale.node.auth;

import io.shale.engine.Engine;
import io.shale.engine.WriteBatch;
import io.shale.node.auth.proto.AuthChange;
import io.shale.node.auth.proto.RolePermission;
import io.shale.node.auth.proto.StoredPermission;
import io.shale.node.auth.proto.StoredRole;
import io.shale.node.auth.proto.StoredUser;
import io.shale.node.auth.proto.UserRole;
import java.util.Arrays;

/**
 * Applies one committed {@link AuthChange} to the state at its index: the writes it makes, or why
 * it is refused. Deterministic: it reads only the engine's state and the change (password hashes
 * arrive already computed), so every replica decides alike.
 */
public final class AuthApplier {
  /**
   * Users, roles, a role's permissions, a user's roles: bounded so no entry can grow them forever.
   */
  static final int MAX_USERS = 10_000;

  static final int MAX_ROLES = 10_000;
  static final int MAX_PERMISSIONS_PER_ROLE = 1_000;
  static final int MAX_ROLES_PER_USER = 100;
  static final int MAX_NAME_CHARS = 64;
  static final int TOKEN_KEY_BYTES = 32;

  private AuthApplier() {}

  /**
   * Adds the effects of {@code change} to {@code batch}; returns null when it applies, else the
   * message refusing it (and adds nothing).
   */
  public static String apply(Engine state, AuthChange change, WriteBatch batch) {
    AuthState auth = AuthState.load(state);
    return switch (change.getChangeCase()) {
      case TOKEN_KEY -> tokenKey(auth, change.getTokenKey().toByteArray(), batch);
      case USER_ADD -> userAdd(auth, change.getUserAdd(), batch);
      case USER_DELETE -> userDelete(auth, change.getUserDelete(), batch);
      case USER_PASSWORD -> userPassword(auth, change.getUserPassword(), batch);
      case USER_GRANT_ROLE -> userRole(auth, change.getUserGrantRole(), true, batch);
      case USER_REVOKE_ROLE -> userRole(auth, change.getUserRevokeRole(), false, batch);
      case ROLE_ADD -> roleAdd(auth, change.getRoleAdd(), batch);
      case ROLE_DELETE -> roleDelete(auth, change.getRoleDelete(), batch);
      case ROLE_GRANT -> rolePermission(auth, change.getRoleGrant(), true, batch);
      case ROLE_REVOKE -> rolePermission(auth, change.getRoleRevoke(), false, batch);
      case CHANGE_NOT_SET -> "an auth change that changes nothing";
    };
  }

  /** Why {@code name} is not a valid user or role name, or null. */
  public static String nameProblem(String kind, String name) {
    if (name.isEmpty() || name.length() > MAX_NAME_CHARS || !name.matches("[A-Za-z0-9._@-]+")) {
      return kind
          + " name \""
          + name
          + "\" must be 1 to "
          + MAX_NAME_CHARS
          + " letters, digits or ._@-";
    }
    return null;
  }

  private static String tokenKey(AuthState auth, byte[] key, WriteBatch batch) {
    if (auth.tokenKey() != null) {
      return null; // the first one proposed stays: later proposals apply nothing
    }
    if (key.length != TOKEN_KEY_BYTES) {
      return "a token key is " + TOKEN_KEY_BYTES + " bytes, got " + key.length;
    }
    batch.put(AuthState.tokenKeyKey(), key);
    return null;
  }

  private static String userAdd(AuthState auth, StoredUser user, WriteBatch batch) {
    String bad = nameProblem("user", user.getName());
    if (bad != null) {
      return bad;
    }
    if (auth.user(user.getName()) != null) {
      return "user " + user.getName() + " already exists";
    }
    if (auth.users().size() >= MAX_USERS) {
      return "there are " + MAX_USERS + " users already (the limit)";
    }
    StoredUser.Builder added = StoredUser.newBuilder().setName(user.getName());
    if (user.hasPassword()) {
      added.setPassword(user.getPassword());
    }
    put(batch, added.build());
    return null;
  }

  private static String userDelete(AuthState auth, String name, WriteBatch batch) {
    if (AuthState.ROOT.equals(name)) {
      return "the user root cannot be deleted";
    }
    if (auth.user(name) == null) {
      return "no user " + name;
    }
    batch.delete(AuthState.userKey(name));
    return null;
  }

  private static String userPassword(AuthState auth, StoredUser change, WriteBatch batch) {
    StoredUser u = auth.user(change.getName());
    if (u == null) {
      return "no user " + change.getName();
    }
    StoredUser.Builder b = u.toBuilder().clearPassword();
    if (change.hasPassword()) {
      b.setPassword(change.getPassword());
    }
    put(batch, b.build());
    return null;
  }

  private static String userRole(AuthState auth, UserRole change, boolean grant, WriteBatch batch) {
    StoredUser u = auth.user(change.getUser());
    if (u == null) {
      return "no user " + change.getUser();
    }
    if (auth.role(change.getRole()) == null) {
      return "no role " + change.getRole();
    }
    boolean has = u.getRolesList().contains(change.getRole());
    if (grant) {
      if (has) {
        return null;
      }
      if (u.getRolesCount() >= MAX_ROLES_PER_USER) {
        return "user " + u.getName() + " has " + MAX_ROLES_PER_USER + " roles already (the limit)";
      }
      put(batch, u.toBuilder().addRoles(change.getRole()).build());
      return null;
    }
    if (AuthState.ROOT.equals(u.getName()) && AuthState.ROOT.equals(change.getRole())) {
      return "the user root keeps the role root";
    }
    if (!has) {
      return "user " + u.getName() + " does not have the role " + change.getRole();
    }
    StoredUser.Builder b = u.toBuilder().clearRoles();
    u.getRolesList().stream().filter(r -> !r.equals(change.getRole())).forEach(b::addRoles);
    put(batch, b.build());
    return null;
  }

  private static String roleAdd(AuthState auth, String name, WriteBatch batch) {
    String bad = nameProblem("role", name);
    if (bad != null) {
      return bad;
    }
    if (auth.role(name) != null) {
      return "role " + name + " already exists";
    }
    if (auth.roles().size() >= MAX_ROLES) {
      return "there are " + MAX_ROLES + " roles already (the limit)";
    }
    put(batch, StoredRole.newBuilder().setName(name).build());
    return null;
  }

  /** Deletes the role and takes it from every user who has it, as etcd does. */
  private static String roleDelete(AuthState auth, String name, WriteBatch batch) {
    if (AuthState.ROOT.equals(name)) {
      return "the role root cannot be deleted";
    }
    if (auth.role(name) == null) {
      return "no role " + name;
    }
    batch.delete(AuthState.roleKey(name));
    for (StoredUser u : auth.users()) {
      if (u.getRolesList().contains(name)) {
        StoredUser.Builder b = u.toBuilder().clearRoles();
        u.getRolesList().stream().filter(r -> !r.equals(name)).forEach(b::addRoles);
        put(batch, b.build());
      }
    }
    return null;
  }

  private static String rolePermission(
      AuthState auth, RolePermission change, boolean grant, WriteBatch batch) {
    if (AuthState.ROOT.equals(change.getRole())) {
      return "the role root's permissions are fixed";
    }
    StoredRole r = auth.role(change.getRole());
    if (r == null) {
      return "no role " + change.getRole();
    }
    StoredPermission p = normalized(change.getPermission());
    String bad = permissionProblem(p);
    if (bad != null) {
      return bad;
    }
    int at = r.getPermissionsList().indexOf(p);
    if (grant) {
      if (at >= 0) {
        return null;
      }
      if (r.getPermissionsCount() >= MAX_PERMISSIONS_PER_ROLE) {
        return "role "
            + r.getName()
            + " has "
            + MAX_PERMISSIONS_PER_ROLE
            + " permissions (the limit)";
      }
      put(batch, r.toBuilder().addPermissions(p).build());
      return null;
    }
    if (at < 0) {
      return "role " + r.getName() + " has no such permission";
    }
    put(batch, r.toBuilder().removePermissions(at).build());
    return null;
  }

  /** An admin permission's range means nothing: stored without one. */
  private static StoredPermission normalized(StoredPermission p) {
    return p.getType() == Grants.ADMIN
        ? StoredPermission.newBuilder().setType(Grants.ADMIN).build()
        : p;
  }

  /** Why {@code p} is not a permission, or null. */
  public static String permissionProblem(StoredPermission p) {
    if (p.getType() > Grants.ADMIN) {
      return "unknown permission type " + p.getType();
    }
    if (!p.getEnd().isEmpty()
        && Arrays.compareUnsigned(p.getStart().toByteArray(), p.getEnd().toByteArray()) >= 0) {
      return "a permission's range end must be after its start";
    }
    if (p.getStart().size() > 64 << 10 || p.getEnd().size() > 64 << 10) {
      return "a permission's range bounds are at most 64 KiB";
    }
    return null;
  }

  private static void put(WriteBatch batch, StoredUser u) {
    batch.put(AuthState.userKey(u.getName()), u.toByteArray());
  }

  private static void put(WriteBatch batch, StoredRole r) {
    batch.put(AuthState.roleKey(r.getName()), r.toByteArray());
  }
}
