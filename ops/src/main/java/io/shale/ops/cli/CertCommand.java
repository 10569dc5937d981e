package io.shale.ops.cli;

import io.shale.node.transport.ClusterCertificates;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code shalectl cert}: makes a cluster's CA (once), a node certificate per node, as PEM files a
 * node's {@code [tls]} names, and a client certificate per user (CockroachDB's {@code cockroach
 * cert} is the model). Works offline: it talks to no node.
 */
@Command(
    name = "cert",
    mixinStandardHelpOptions = true,
    description = {
      "Makes the cluster's CA in DIR (ca.pem, ca-key.pem) unless it exists, then a node "
          + "certificate and key for each --node (NODE.pem, NODE-key.pem), issued for the --host "
          + "names and addresses peers dial, and a client certificate and key for each --client "
          + "user (client.USER.pem, client.USER-key.pem). Existing files are kept unless --force.",
      "Keep ca-key.pem off the nodes; give each node ca.pem, its NODE.pem and NODE-key.pem; give "
          + "a client ca.pem and its user's two files (shalectl --tls-dir DIR --user USER)."
    })
final class CertCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--dir", required = true, paramLabel = "DIR", description = "Where the files go.")
  Path dir;

  @Option(
      names = "--node",
      paramLabel = "ID",
      split = ",",
      description = "Node ids to issue certificates for (repeat, or comma-separated).")
  List<String> nodes = new ArrayList<>();

  @Option(
      names = "--client",
      paramLabel = "USER",
      split = ",",
      description = "Users to issue client certificates for (subject CN USER).")
  List<String> clients = new ArrayList<>();

  @Option(
      names = "--host",
      paramLabel = "NAME|IP",
      split = ",",
      description =
          "Names and addresses the node certificates are valid for (default: 127.0.0.1, "
              + "localhost and the node id).")
  List<String> hosts = new ArrayList<>();

  @Option(
      names = "--days",
      paramLabel = "N",
      description = "Validity of new certificates in days (default: 365).")
  int days = 365;

  @Option(names = "--force", description = "Replace existing node certificates.")
  boolean force;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    // The launcher runs from the repository root; a relative --dir means the caller's directory.
    Path dir = Path.of(System.getProperty("shale.ops.cwd", ".")).resolve(this.dir);
    if (nodes.isEmpty() && clients.isEmpty()) {
      throw new IllegalArgumentException("name at least one --node or --client");
    }
    ClusterCertificates.ensure(
            dir, nodes, clients, hosts, Duration.ofDays(Math.max(days, 1)), force)
        .forEach(out::println);
    out.flush();
    return Shalectl.OK;
  }
}
