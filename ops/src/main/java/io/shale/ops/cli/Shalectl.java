package io.shale.ops.cli;

import io.shale.client.InvalidRequestException;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleTimeoutException;
import io.shale.client.ShaleUnavailableException;
import io.shale.client.WriteThrottledException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code shalectl}: Shale's command-line tool, for operators and scripts (etcdctl's role). Every
 * command talks to the cluster through the Java SDK, so it gets the SDK's retries, leader routing
 * and error types; exit codes tell scripts what happened.
 */
@Command(
    name = "shalectl",
    mixinStandardHelpOptions = true,
    versionProvider = Shalectl.Version.class,
    description = "Reads, writes and administers a Shale cluster.",
    subcommands = {
      KeyCommands.Put.class,
      KeyCommands.Get.class,
      KeyCommands.Del.class,
      KeyCommands.Scan.class,
      KeyCommands.Cas.class,
      KeyCommands.TxnCommand.class,
      KeyCommands.WatchCommand.class,
      LeaseCommands.class,
      BackupCommands.class,
      ClusterCommands.Status.class,
      ClusterCommands.MemberCommands.class,
      ClusterCommands.LeaderCommands.class,
      ClusterCommands.Snapshot.class,
      ClusterCommands.Compact.class,
      ClusterCommands.Stats.class,
      AuthCommands.WhoAmI.class,
      AuthCommands.UserCommands.class,
      AuthCommands.RoleCommands.class,
      CertCommand.class,
      CommandLine.HelpCommand.class
    },
    footerHeading = "%nExit codes:%n",
    footer = {
      "  0  done",
      "  1  the cluster refused or failed the request (message on stderr)",
      "  2  bad command line, or a request the server calls malformed (key too large, ...)",
      "  3  get: the key does not exist; lease commands and put --lease: the lease does not live",
      "  4  cas: the comparison failed, nothing was written",
      "  5  no answer: nodes unreachable, no leader, or the deadline passed",
      "  6  the write was throttled by write pressure (retry later)",
      "",
      "Endpoints default to $SHALE_ENDPOINTS, else 127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203,",
      "the local cluster of ops/bin/shale-local, whose certificates shalectl then finds itself."
    })
public final class Shalectl {
  /** {@code --version}: the version and commit stamped at build time. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"shalectl " + io.shale.node.server.ReleaseVersion.describe()};
    }
  }

  static final int OK = 0;
  static final int FAILED = 1;
  static final int USAGE = 2;
  static final int NOT_FOUND = 3;
  static final int CAS_FAILED = 4;
  static final int UNAVAILABLE = 5;
  static final int THROTTLED = 6;

  static final String DEFAULT_ENDPOINTS = "127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203";

  @Option(
      names = "--endpoints",
      scope = ScopeType.INHERIT,
      paramLabel = "HOST:PORT,...",
      description = "Nodes' API addresses, comma-separated.")
  String endpoints;

  @Option(
      names = {"-o", "--output"},
      scope = ScopeType.INHERIT,
      paramLabel = "table|json",
      description = "Output format (default: table).")
  String output = "table";

  @Option(
      names = "--deadline",
      scope = ScopeType.INHERIT,
      paramLabel = "DURATION",
      description =
          "How long a command may take, retries included, e.g. 10s, 500ms " + "(default: 10s).")
  String deadline = "10s";

  @Option(
      names = "--tls-dir",
      scope = ScopeType.INHERIT,
      paramLabel = "DIR",
      description =
          "Speak TLS with the certificates in DIR, as shalectl cert writes them: trust "
              + "DIR/ca.pem, present DIR/client.USER.pem (default: $SHALE_TLS_DIR; with the "
              + "default endpoints, .shale-local/certs when it exists).")
  Path tlsDir;

  @Option(
      names = "--user",
      scope = ScopeType.INHERIT,
      paramLabel = "USER",
      description = "Whose client certificate in the --tls-dir to present (default: root).")
  String user = ClientTls.DEFAULT_USER;

  @Option(
      names = "--password-file",
      scope = ScopeType.INHERIT,
      paramLabel = "FILE",
      description =
          "Authenticate as --user with the password on the first line of FILE (default: "
              + "$SHALE_PASSWORD), with a token instead of the client certificate.")
  Path passwordFile;

  @Option(
      names = "--plaintext",
      scope = ScopeType.INHERIT,
      description = "Speak plaintext, to nodes configured without [tls].")
  boolean plaintext;

  /** A client for the command line's endpoints; the caller closes it. */
  ShaleClient client() {
    return client(null);
  }

  /**
   * A client of {@code only} (one node's API address), or of the command line's endpoints when
   * null, with the command line's TLS and credentials; the caller closes it.
   */
  ShaleClient client(String only) {
    String fromEnv = System.getenv("SHALE_ENDPOINTS");
    String e = endpoints != null ? endpoints : fromEnv != null ? fromEnv : DEFAULT_ENDPOINTS;
    ShaleClient.Builder b =
        ShaleClient.builder().endpoints(only != null ? only : e).deadline(duration(deadline));
    Path dir = tlsDirectory(endpoints == null && fromEnv == null);
    String password = password();
    if (dir != null) {
      // With a password the user is named by it, not by a certificate.
      b.tls(ClientTls.fromDirectory(dir, password == null ? user : null));
    }
    if (password != null) {
      b.credentials(user, password);
    }
    return b.build();
  }

  /** The password to authenticate with, or null to rely on the client certificate. */
  private String password() {
    try {
      if (passwordFile != null) {
        Path f = Path.of(System.getProperty("shale.ops.cwd", ".")).resolve(passwordFile);
        return Files.readString(f).lines().findFirst().orElse("");
      }
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("cannot read --password-file " + passwordFile + ": " + e);
    }
    String fromEnv = System.getenv("SHALE_PASSWORD");
    return fromEnv == null || fromEnv.isEmpty() ? null : fromEnv;
  }

  /** The certificate directory to use, or null for plaintext. */
  private Path tlsDirectory(boolean defaultEndpoints) {
    if (plaintext) {
      return null;
    }
    // The launcher runs from the repository root; relative paths mean the caller's directory.
    Path cwd = Path.of(System.getProperty("shale.ops.cwd", "."));
    if (tlsDir != null) {
      return cwd.resolve(tlsDir);
    }
    String fromEnv = System.getenv("SHALE_TLS_DIR");
    if (fromEnv != null && !fromEnv.isEmpty()) {
      return cwd.resolve(fromEnv);
    }
    Path local = ClientTls.LOCAL_CLUSTER_CERTS; // the launcher's working directory is the root
    return defaultEndpoints && Files.exists(local.resolve("ca.pem")) ? local : null;
  }

  Output output(PrintWriter out) {
    return switch (output) {
      case "table" -> new Output(Output.Format.TABLE, out);
      case "json" -> new Output(Output.Format.JSON, out);
      default ->
          throw new IllegalArgumentException(
              "--output must be table or json, got '" + output + "'");
    };
  }

  static Duration duration(String s) {
    var m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m)").matcher(s.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "a duration is a number and ms, s or m (e.g. 500ms, " + "10s), got '" + s + "'");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      default -> Duration.ofMinutes(n);
    };
  }

  /** The command line, set up with shalectl's error handling and exit codes. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Shalectl());
    cl.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          line.getErr().println("shalectl: " + e.getMessage());
          line.getErr().flush();
          return exitCode(e);
        });
    return cl;
  }

  static int exitCode(Exception e) {
    if (e instanceof InvalidRequestException || e instanceof IllegalArgumentException) {
      return USAGE;
    }
    if (e instanceof io.shale.client.LeaseNotFoundException) {
      return NOT_FOUND;
    }
    if (e instanceof WriteThrottledException) {
      return THROTTLED;
    }
    if (e instanceof ShaleTimeoutException || e instanceof ShaleUnavailableException) {
      return UNAVAILABLE;
    }
    return FAILED;
  }

  public static void main(String[] args) {
    int code = commandLine().execute(args);
    System.exit(code);
  }

  static List<String> row(Object... cells) {
    return java.util.Arrays.stream(cells).map(String::valueOf).toList();
  }
}
