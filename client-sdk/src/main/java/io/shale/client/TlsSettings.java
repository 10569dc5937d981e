package io.shale.client;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS for the client's channels: the PEM certificates of the authorities the client trusts (null:
 * the JVM's default trust store) and, for mutual TLS, the client's PEM certificate chain and PKCS#8
 * private key. Files are checked when the client is built, so a wrong path fails there and not at
 * the first call.
 */
public record TlsSettings(Path trustCertificates, Path clientCertificate, Path clientKey) {
  /** Server authentication only, trusting the authorities in {@code trustCertificates}. */
  public static TlsSettings trust(Path trustCertificates) {
    return new TlsSettings(trustCertificates, null, null);
  }

  /** Mutual TLS: trust {@code trustCertificates}, present {@code certificate} and its key. */
  public static TlsSettings mutual(Path trustCertificates, Path certificate, Path key) {
    return new TlsSettings(trustCertificates, certificate, key);
  }

  public TlsSettings {
    if ((clientCertificate == null) != (clientKey == null)) {
      throw new IllegalArgumentException(
          "a client certificate needs its private key and the reverse; got only one of them");
    }
    for (Path p : new Path[] {trustCertificates, clientCertificate, clientKey}) {
      if (p != null && !Files.isReadable(p)) {
        throw new IllegalArgumentException("TLS file " + p + " does not exist or is not readable");
      }
    }
  }
}
