package io.shale.node.transport;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A cluster's certificate directory: {@code ca.pem} and {@code ca-key.pem} made once, then {@code
 * ID.pem} and {@code ID-key.pem} for each node and {@code client.NAME.pem} and {@code
 * client.NAME-key.pem} for each client user (subject CN NAME), issued by that CA. Existing files
 * are kept (unless forced), so running it again adds nodes and users without replacing anyone's
 * certificate. Behind {@code shalectl cert}; {@link #main} is the same for a container's one-shot
 * init step, where shalectl is not installed.
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
      Path dir,
      List<String> nodes,
      List<String> clients,
      List<String> hosts,
      Duration validity,
      boolean force) {
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
    for (String user : clients) {
      Path cert = clientCertificate(dir, user);
      Path key = clientKey(dir, user);
      if (!force && Files.exists(cert) && Files.exists(key)) {
        report.add("client   " + cert + " (kept)");
        continue;
      }
      Instant now = Instant.now();
      ca.issue(user, List.of(), now.minus(Duration.ofMinutes(5)), now.plus(validity))
          .write(cert, key);
      report.add("client   " + cert + " for user " + user);
    }
    return report;
  }

  /** Client user {@code name}'s certificate in certificate directory {@code dir}. */
  public static Path clientCertificate(Path dir, String name) {
    return dir.resolve("client." + name + ".pem");
  }

  /** Client user {@code name}'s private key in certificate directory {@code dir}. */
  public static Path clientKey(Path dir, String name) {
    return dir.resolve("client." + name + "-key.pem");
  }

  /**
   * {@code ClusterCertificates DIR NODE...}: the defaults of {@code shalectl cert}, with the client
   * user {@code root}.
   */
  public static void main(String[] args) {
    if (args.length < 2) {
      throw new IllegalArgumentException("usage: ClusterCertificates DIR NODE...");
    }
    for (String line :
        ensure(
            Path.of(args[0]),
            Arrays.asList(args).subList(1, args.length),
            List.of("root"),
            List.of(),
            Duration.ofDays(365),
            false)) {
      System.out.println(line);
    }
  }
}
