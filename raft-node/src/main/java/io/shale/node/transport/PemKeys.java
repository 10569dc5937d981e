package io.shale.node.transport;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * Reads an unencrypted PEM private key. PKCS#8 ({@code BEGIN PRIVATE KEY}, what {@code shalectl
 * cert}, {@link CertificateAuthority} and {@code openssl genpkey} write) is read by the JDK alone;
 * the older PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) and SEC1 ({@code BEGIN EC PRIVATE KEY}) forms go
 * through BouncyCastle.
 *
 * <p>Why two paths: BouncyCastle's jar is signed, and the JVM neither archives a signed jar's
 * classes in the ahead-of-time cache nor loads them without checking the signature, which cost a
 * node about 2 s of its TLS start. A key in the usual form now never loads a BouncyCastle class;
 * {@link Legacy} holds every reference to one, so that it is resolved only when used.
 */
public final class PemKeys {
  private static final String BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String END = "-----END PRIVATE KEY-----";

  /** The algorithms a PKCS#8 key may be of, tried in turn (its DER names it, but so does a try). */
  private static final List<String> ALGORITHMS = List.of("EC", "RSA", "Ed25519", "Ed448");

  private PemKeys() {}

  /**
   * The key in {@code pem}, read from {@code file}; {@code what} names the setting in errors.
   *
   * @throws IllegalArgumentException naming the file and what is wrong with it
   */
  public static PrivateKey read(String what, Path file, byte[] pem) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
      throw new IllegalArgumentException(
          what
              + ": "
              + file
              + " holds an encrypted private key; a node reads unencrypted PKCS#8 only"
              + " (openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pkcs8), kept readable by its"
              + " owner alone");
    }
    int begin = text.indexOf(BEGIN);
    if (begin < 0) {
      return Legacy.read(what, file, pem);
    }
    int end = text.indexOf(END, begin);
    if (end < 0) {
      throw new IllegalArgumentException(
          what + ": " + file + " is not a PEM private key: no " + END + " line");
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(text.substring(begin + BEGIN.length(), end));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          what + ": " + file + " is not a PEM private key: " + e.getMessage(), e);
    }
    for (String algorithm : ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm's key (or not a key at all): try the next
      }
    }
    throw new IllegalArgumentException(
        what
            + ": "
            + file
            + " holds no PKCS#8 private key of "
            + String.join(", ", ALGORITHMS)
            + " (a damaged file, or another algorithm)");
  }

  /** The BouncyCastle path, for the PKCS#1 and SEC1 forms. */
  private static final class Legacy {
    static PrivateKey read(String what, Path file, byte[] pem) {
      try (Reader r =
              new java.io.InputStreamReader(
                  new java.io.ByteArrayInputStream(pem), StandardCharsets.US_ASCII);
          PEMParser parser = new PEMParser(r)) {
        Object o = parser.readObject();
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        if (o instanceof PEMKeyPair pair) {
          // The private part alone: a SEC1 key need not carry its public key.
          return converter.getPrivateKey(pair.getPrivateKeyInfo());
        }
        if (o instanceof PrivateKeyInfo info) {
          return converter.getPrivateKey(info);
        }
        throw new IllegalArgumentException(
            what
                + ": "
                + file
                + " holds no unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)"
                + (o == null ? "" : "; found " + o.getClass().getSimpleName()));
      } catch (IOException e) {
        throw new IllegalArgumentException(
            what + ": " + file + " is not a PEM private key: " + e.getMessage(), e);
      }
    }
  }
}
