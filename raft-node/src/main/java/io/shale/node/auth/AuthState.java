package io.shale.node.auth;

import com.google.protobuf.InvalidProtocolBufferException;
import io.shale.engine.Engine;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.node.auth.proto.StoredPermission;
import io.shale.node.auth.proto.StoredRole;
import io.shale.node.auth.proto.StoredUser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Users, roles and the token key as of one applied index, read from the engine, where they live
 * under the node's reserved prefix (so they replicate, survive restarts and travel with snapshots
 * like any data):
 *
 * <pre>
 *   \0au{name} -> StoredUser      \0ar{name} -> StoredRole      \0ak -> token key
 * </pre>
 *
 * The user {@code root} and the role {@code root} (every key read and written, and administration)
 * are built in: they exist from a cluster's first entry, root's role cannot be taken away, and a
 * stored record for the user root only adds its password. Immutable.
 */
public final class AuthState {
  public static final String ROOT = "root";

  static final byte[] PREFIX = {0, 'a'};
  private static final byte USER = 'u';
  private static final byte ROLE = 'r';
  private static final byte[] TOKEN_KEY = {0, 'a', 'k'};

  /** Before any entry: root only, no token key. */
  public static final AuthState EMPTY = new AuthState(Map.of(), Map.of(), null);

  static final StoredRole ROOT_ROLE =
      StoredRole.newBuilder()
          .setName(ROOT)
          .addPermissions(StoredPermission.newBuilder().setType(Grants.READWRITE))
          .addPermissions(StoredPermission.newBuilder().setType(Grants.ADMIN))
          .build();

  private final Map<String, StoredUser> users;
  private final Map<String, StoredRole> roles;
  private final byte[] tokenKey;

  /**
   * Each existing user's grants, built on its first call against this state: every API call asks
   * for them, and building them collects and sorts the ranges of all the user's roles. Bounded by
   * the stored users; the state is immutable, so the entries never go stale.
   */
  private final Map<String, Grants> grantsByUser = new ConcurrentHashMap<>();

  private AuthState(Map<String, StoredUser> users, Map<String, StoredRole> roles, byte[] tokenKey) {
    this.users = users;
    this.roles = roles;
    this.tokenKey = tokenKey;
  }

  /** The state stored in {@code engine}. */
  public static AuthState load(Engine engine) {
    Map<String, StoredUser> users = new TreeMap<>();
    Map<String, StoredRole> roles = new TreeMap<>();
    byte[] tokenKey = null;
    try (ScanIterator it =
        engine.scan(new ScanOptions(PREFIX, new byte[] {0, 'a' + 1}, 0, false, false))) {
      while (it.next()) {
        byte[] key = it.key();
        if (Arrays.equals(key, TOKEN_KEY)) {
          tokenKey = it.value();
        } else if (key.length > 3 && key[2] == USER) {
          StoredUser u = StoredUser.parseFrom(it.value());
          users.put(u.getName(), u);
        } else if (key.length > 3 && key[2] == ROLE) {
          StoredRole r = StoredRole.parseFrom(it.value());
          roles.put(r.getName(), r);
        }
      }
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("a stored user or role does not parse", e);
    }
    return new AuthState(
        Collections.unmodifiableMap(users), Collections.unmodifiableMap(roles), tokenKey);
  }

  static byte[] userKey(String name) {
    return key(USER, name);
  }

  static byte[] roleKey(String name) {
    return key(ROLE, name);
  }

  static byte[] tokenKeyKey() {
    return TOKEN_KEY.clone();
  }

  private static byte[] key(byte kind, String name) {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    byte[] k = new byte[3 + n.length];
    k[0] = PREFIX[0];
    k[1] = PREFIX[1];
    k[2] = kind;
    System.arraycopy(n, 0, k, 3, n.length);
    return k;
  }

  /** The user {@code name}, or null when there is none. */
  public StoredUser user(String name) {
    StoredUser u = users.get(name);
    if (ROOT.equals(name)) {
      StoredUser.Builder root = StoredUser.newBuilder().setName(ROOT).addRoles(ROOT);
      if (u != null) {
        u.getRolesList().stream().filter(r -> !r.equals(ROOT)).forEach(root::addRoles);
        if (u.hasPassword()) {
          root.setPassword(u.getPassword());
        }
      }
      return root.build();
    }
    return u;
  }

  /** The role {@code name}, or null when there is none. */
  public StoredRole role(String name) {
    return ROOT.equals(name) ? ROOT_ROLE : roles.get(name);
  }

  /** Every user, root first, then by name. */
  public List<StoredUser> users() {
    List<StoredUser> out = new ArrayList<>();
    out.add(user(ROOT));
    users.values().stream().filter(u -> !u.getName().equals(ROOT)).forEach(out::add);
    return out;
  }

  /** Every role, root first, then by name. */
  public List<StoredRole> roles() {
    List<StoredRole> out = new ArrayList<>();
    out.add(ROOT_ROLE);
    roles.values().stream().filter(r -> !r.getName().equals(ROOT)).forEach(out::add);
    return out;
  }

  /** What {@code user}'s roles allow; null when there is no such user. */
  public Grants grants(String user) {
    Grants known = grantsByUser.get(user);
    if (known != null) {
      return known;
    }
    StoredUser u = user(user);
    if (u == null) {
      return null;
    }
    Grants built = grantsOf(u);
    grantsByUser.putIfAbsent(user, built);
    return built;
  }

  private Grants grantsOf(StoredUser u) {
    List<StoredPermission> all = new ArrayList<>();
    for (String r : u.getRolesList()) {
      StoredRole role = role(r);
      if (role != null) {
        all.addAll(role.getPermissionsList());
      }
    }
    return Grants.of(all);
  }

  /** The key tokens are signed with; null until the first leader has proposed one. */
  public byte[] tokenKey() {
    return tokenKey == null ? null : tokenKey.clone();
  }
}
