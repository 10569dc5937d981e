package io.shale.ops.cli;

import io.shale.client.TlsSettings;
import io.shale.node.transport.ClusterCertificates;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The TLS a command-line client (shalectl, the local demo) speaks, from a certificate directory as
 * {@code shalectl cert} writes it: trust {@code ca.pem}, and present the user's client certificate
 * when the directory holds one.
 */
public final class ClientTls {
  /**
   * Where {@code ops/bin/shale-local} keeps its cluster's certificates, from the repository root.
   */
  public static final Path LOCAL_CLUSTER_CERTS = Path.of(".shale-local", "certs");

  /** The user a client presents when none is named: the one bootstrapped with every cluster. */
  public static final String DEFAULT_USER = "root";

  private ClientTls() {}

  /**
   * TLS trusting {@code dir/ca.pem}, presenting {@code dir/client.USER.pem} and its key when both
   * exist (and {@code user} is not null).
   *
   * @throws IllegalArgumentException naming the file when {@code dir} has no {@code ca.pem}
   */
  public static TlsSettings fromDirectory(Path dir, String user) {
    Path ca = dir.resolve("ca.pem");
    if (!Files.isReadable(ca)) {
      throw new IllegalArgumentException(
          "no CA certificate " + ca + " (make one with: shalectl cert --dir " + dir + " ...)");
    }
    if (user == null) {
      return TlsSettings.trust(ca);
    }
    Path cert = ClusterCertificates.clientCertificate(dir, user);
    Path key = ClusterCertificates.clientKey(dir, user);
    return Files.isReadable(cert) && Files.isReadable(key)
        ? TlsSettings.mutual(ca, cert, key)
        : TlsSettings.trust(ca);
  }
}
