package io.shale.ops.cli;

import io.shale.client.AuthAdmin;
import io.shale.client.ShaleClient;
import io.shale.client.proto.Permission;
import io.shale.client.proto.Role;
import io.shale.client.proto.User;
import io.shale.client.proto.WhoAmIResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * shalectl's user and role commands (etcdctl's {@code user} and {@code role}), and {@code whoami}.
 * Changes need the ADMIN permission (the user root has it); a user may change its own password.
 */
final class AuthCommands {
  private AuthCommands() {}

  /** A password from a file (its first line) or from $SHALE_NEW_PASSWORD; never from argv. */
  static final class NewPassword {
    @Option(
        names = "--new-password-file",
        paramLabel = "FILE",
        description =
            "Read the password from the first line of FILE (default: $SHALE_NEW_PASSWORD; "
                + "neither: no password, certificate only).")
    Path file;

    String read() throws java.io.IOException {
      if (file != null) {
        String first =
            Files.readString(file, StandardCharsets.UTF_8).lines().findFirst().orElse("");
        return first;
      }
      return System.getenv().getOrDefault("SHALE_NEW_PASSWORD", "");
    }
  }

  /** A change named by one argument, answered "OK". */
  abstract static class NamedChange extends ClientCommand {
    @Parameters(index = "0", paramLabel = "NAME")
    String name;

    abstract void change(AuthAdmin auth, String name);

    @Override
    int run(ShaleClient client, Output out) {
      change(client.auth(), name);
      out.line("OK");
      return Shalectl.OK;
    }
  }

  /** A change of one user's roles. */
  abstract static class UserRoleChange extends ClientCommand {
    @Parameters(index = "0", paramLabel = "USER")
    String user;

    @Parameters(index = "1", paramLabel = "ROLE")
    String role;

    abstract void change(AuthAdmin auth, String user, String role);

    @Override
    int run(ShaleClient client, Output out) {
      change(client.auth(), user, role);
      out.line("OK");
      return Shalectl.OK;
    }
  }

  /** A change of one role's permissions. */
  abstract static class PermissionChange extends ClientCommand {
    @Parameters(index = "0", paramLabel = "ROLE")
    String role;

    @ArgGroup(exclusive = false, multiplicity = "1")
    PermissionSpec permission;

    abstract void change(AuthAdmin auth, String role, Permission p);

    @Override
    int run(ShaleClient client, Output out) {
      change(client.auth(), role, permission.build());
      out.line("OK");
      return Shalectl.OK;
    }
  }

  @Command(
      name = "whoami",
      mixinStandardHelpOptions = true,
      description = "The user the cluster takes you for, how it knew, and your permissions.")
  static final class WhoAmI extends ClientCommand {
    @Override
    int run(ShaleClient client, Output out) {
      WhoAmIResponse w = client.auth().whoAmI();
      if (out.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", w.getUser());
        m.put("authenticated_by", w.getAuthenticatedBy());
        m.put("permissions", w.getPermissionsList().stream().map(AuthCommands::describe).toList());
        out.json(m);
      } else {
        out.line(
            w.getUser().isEmpty()
                ? "(the node does not check callers)"
                : w.getUser() + " (by " + w.getAuthenticatedBy() + ")");
        w.getPermissionsList().forEach(p -> out.line("  " + describe(p)));
      }
      return Shalectl.OK;
    }
  }

  @Command(
      name = "user",
      mixinStandardHelpOptions = true,
      description = "Lists, adds and deletes users, sets passwords, grants and revokes roles.",
      subcommands = {
        UserCommands.ListUsers.class,
        UserCommands.Add.class,
        UserCommands.Delete.class,
        UserCommands.Passwd.class,
        UserCommands.GrantRole.class,
        UserCommands.RevokeRole.class
      })
  static final class UserCommands {
    @Command(name = "list", mixinStandardHelpOptions = true, description = "Users and their roles.")
    static final class ListUsers extends ClientCommand {
      @Override
      int run(ShaleClient client, Output out) {
        List<User> users = client.auth().users();
        if (out.json()) {
          out.json(
              users.stream()
                  .map(
                      u -> {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("name", u.getName());
                        m.put("roles", u.getRolesList());
                        m.put("has_password", u.getHasPassword());
                        return m;
                      })
                  .toList());
        } else {
          List<List<String>> rows = new ArrayList<>();
          for (User u : users) {
            rows.add(
                Shalectl.row(
                    u.getName(),
                    String.join(",", u.getRolesList()),
                    u.getHasPassword() ? "yes" : "no"));
          }
          out.table(List.of("USER", "ROLES", "PASSWORD"), rows);
        }
        return Shalectl.OK;
      }
    }

    @Command(
        name = "add",
        mixinStandardHelpOptions = true,
        description =
            "Adds a user. With a password it can authenticate for a token; without, only with a "
                + "client certificate whose CN is its name (shalectl cert --client NAME).")
    static final class Add extends ClientCommand {
      @Parameters(index = "0", paramLabel = "NAME")
      String name;

      @ArgGroup(exclusive = false)
      NewPassword password = new NewPassword();

      @Override
      int run(ShaleClient client, Output out) throws Exception {
        client.auth().addUser(name, password.read());
        out.line("OK");
        return Shalectl.OK;
      }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes a user.")
    static final class Delete extends NamedChange {
      @Override
      void change(AuthAdmin auth, String name) {
        auth.deleteUser(name);
      }
    }

    @Command(
        name = "passwd",
        mixinStandardHelpOptions = true,
        description = "Sets a user's password (none given: removes it).")
    static final class Passwd extends ClientCommand {
      @Parameters(index = "0", paramLabel = "NAME")
      String name;

      @ArgGroup(exclusive = false)
      NewPassword password = new NewPassword();

      @Override
      int run(ShaleClient client, Output out) throws Exception {
        client.auth().changePassword(name, password.read());
        out.line("OK");
        return Shalectl.OK;
      }
    }

    @Command(
        name = "grant-role",
        mixinStandardHelpOptions = true,
        description = "Gives a user a role.")
    static final class GrantRole extends UserRoleChange {
      @Override
      void change(AuthAdmin auth, String user, String role) {
        auth.grantRole(user, role);
      }
    }

    @Command(
        name = "revoke-role",
        mixinStandardHelpOptions = true,
        description = "Takes a role from a user.")
    static final class RevokeRole extends UserRoleChange {
      @Override
      void change(AuthAdmin auth, String user, String role) {
        auth.revokeRole(user, role);
      }
    }
  }

  /** Which permission: its type and its keys. */
  static final class PermissionSpec {
    @Option(
        names = "--type",
        required = true,
        paramLabel = "read|write|readwrite|admin",
        description = "What the permission allows.")
    String type;

    @Option(names = "--prefix", paramLabel = "PREFIX", description = "Keys starting with PREFIX.")
    String prefix;

    @Option(names = "--from", paramLabel = "KEY", description = "Keys from KEY (inclusive)...")
    String from;

    @Option(
        names = "--to",
        paramLabel = "KEY",
        description = "...to KEY (exclusive; default: the last key).")
    String to;

    Permission build() {
      Permission.Type t =
          switch (type) {
            case "read" -> Permission.Type.READ;
            case "write" -> Permission.Type.WRITE;
            case "readwrite" -> Permission.Type.READWRITE;
            case "admin" -> Permission.Type.ADMIN;
            default ->
                throw new IllegalArgumentException(
                    "--type is read, write, readwrite or admin, got '" + type + "'");
          };
      if (t == Permission.Type.ADMIN) {
        return AuthAdmin.admin();
      }
      if (prefix != null && (from != null || to != null)) {
        throw new IllegalArgumentException("give --prefix, or --from and --to, not both");
      }
      if (prefix != null) {
        return AuthAdmin.prefix(t, prefix.getBytes(StandardCharsets.UTF_8));
      }
      return AuthAdmin.range(
          t,
          (from == null ? "" : from).getBytes(StandardCharsets.UTF_8),
          to == null ? null : to.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Command(
      name = "role",
      mixinStandardHelpOptions = true,
      description = "Lists, adds and deletes roles, grants and revokes their permissions.",
      subcommands = {
        RoleCommands.ListRoles.class,
        RoleCommands.Add.class,
        RoleCommands.Delete.class,
        RoleCommands.Grant.class,
        RoleCommands.Revoke.class
      })
  static final class RoleCommands {
    @Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = "Roles and their permissions.")
    static final class ListRoles extends ClientCommand {
      @Override
      int run(ShaleClient client, Output out) {
        List<Role> roles = client.auth().roles();
        if (out.json()) {
          out.json(
              roles.stream()
                  .map(
                      r -> {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("name", r.getName());
                        m.put(
                            "permissions",
                            r.getPermissionsList().stream().map(AuthCommands::describe).toList());
                        return m;
                      })
                  .toList());
        } else {
          List<List<String>> rows = new ArrayList<>();
          for (Role r : roles) {
            rows.add(
                Shalectl.row(
                    r.getName(),
                    String.join(
                        "; ",
                        r.getPermissionsList().stream().map(AuthCommands::describe).toList())));
          }
          out.table(List.of("ROLE", "PERMISSIONS"), rows);
        }
        return Shalectl.OK;
      }
    }

    @Command(
        name = "add",
        mixinStandardHelpOptions = true,
        description = "Adds a role (no permissions yet).")
    static final class Add extends NamedChange {
      @Override
      void change(AuthAdmin auth, String name) {
        auth.addRole(name);
      }
    }

    @Command(
        name = "delete",
        mixinStandardHelpOptions = true,
        description = "Deletes a role and takes it from every user who has it.")
    static final class Delete extends NamedChange {
      @Override
      void change(AuthAdmin auth, String name) {
        auth.deleteRole(name);
      }
    }

    @Command(
        name = "grant",
        mixinStandardHelpOptions = true,
        description = "Grants a role a permission.")
    static final class Grant extends PermissionChange {
      @Override
      void change(AuthAdmin auth, String role, Permission p) {
        auth.grantPermission(role, p);
      }
    }

    @Command(
        name = "revoke",
        mixinStandardHelpOptions = true,
        description = "Revokes a permission of a role (give it as granted).")
    static final class Revoke extends PermissionChange {
      @Override
      void change(AuthAdmin auth, String role, Permission p) {
        auth.revokePermission(role, p);
      }
    }
  }

  /** "read [app/, app0)", "admin". */
  static String describe(Permission p) {
    if (p.getType() == Permission.Type.ADMIN) {
      return "admin";
    }
    return p.getType().name().toLowerCase(java.util.Locale.ROOT)
        + " ["
        + Output.printable(p.getStart().toByteArray())
        + ", "
        + (p.getEnd().isEmpty() ? "end" : Output.printable(p.getEnd().toByteArray()))
        + ")";
  }
}
