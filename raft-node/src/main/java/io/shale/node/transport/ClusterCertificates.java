package io.shale.node.transport;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A cluster's certificate directory: {@code ca.pem} and {@code ca-key.pem} made once, then {@code
 * ID.pem} and {@code ID-key.pem} for each node, issued by that CA. Existing files are kept (unless
 * forced), so running it again adds nodes without replacing anyone's certificate. Behind {@code
 * shalectl cert}; {@link #main} is the same for a container's one-shot init step, where shalectl is
 * not installed.
 */
public final class ClusterCertificates {
  private ClusterCertificates() {}

  /**
   * Makes what is missing in {@code dir}; returns one line per file set, saying what was made or
   * kept.
   *
   * @param hosts names and addresses node certificates are valid for; empty means 127.0.0.1,
   *     localhost and the node id
   */
  public static List<String> ensure(
      Path dir, List<String> nodes, List<String> hosts, Duration validity, boolean force) {
    List<String> report = new ArrayList<>();
    Path caCert = dir.resolve("ca.pem");
    Path caKey = dir.resolve("ca-key.pem");
    CertificateAuthority ca;
    if (Files.exists(caCert) && Files.exists(caKey)) {
      ca = CertificateAuthority.load(caCert, caKey);
      report.add("CA       " + caCert + " (kept)");
    } else {
      ca = CertificateAuthority.create("shale-ca", validity.multipliedBy(2));
      ca.writeCertificate(caCert);
      ca.writeKey(caKey);
      report.add("CA       " + caCert + " (new; its key " + caKey + ")");
    }
    for (String node : nodes) {
      Path cert = dir.resolve(node + ".pem");
      Path key = dir.resolve(node + "-key.pem");
      if (!force && Files.exists(cert) && Files.exists(key)) {
        report.add("node     " + cert + " (kept)");
        continue;
      }
      List<String> names = hosts.isEmpty() ? List.of("127.0.0.1", "localhost", node) : hosts;
      ca.issueNode(names, validity).write(cert, key);
      report.add("node     " + cert + " for " + String.join(", ", names));
    }
    return report;
  }

  /** {@code ClusterCertificates DIR NODE...}: the defaults of {@code shalectl cert}. */
  public static void main(String[] args) {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: ClusterCertificates DIR NODE...");
    }
    for (String line :
        ensure(
            Path.of(args[0]),
            Arrays.asList(args).subList(1, args.length),
            List.of(),
            Duration.ofDays(365),
            false)) {
      System.out.println(line);
    }
  }
}
