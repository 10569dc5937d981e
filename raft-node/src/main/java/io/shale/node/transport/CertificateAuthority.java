package io.shale.node.transport;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemGenerationException;

/**
 * A certificate authority that issues the certificates of one cluster: node certificates (the
 * subject CN {@link PeerTls#DEFAULT_PEER_NAME}, SANs naming the hosts peers dial) and client
 * certificates (the CN names the user). Keys are ECDSA P-256 and signatures SHA-256, accepted by
 * every TLS 1.2+ stack. For the throwaway CA of a local cluster and for tests; production
 * deployments may bring certificates from their own CA instead.
 */
public final class CertificateAuthority {
  private static final String SIGNATURE = "SHA256withECDSA";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final X509Certificate certificate;
  private final PrivateKey key;

  private CertificateAuthority(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
  }

  /** A certificate and its private key. */
  public record Issued(X509Certificate certificate, PrivateKey key) {
    /** The certificate as PEM text. */
    public String certificatePem() {
      return pem(certificate);
    }

    /** The private key as PKCS#8 PEM text. */
    public String keyPem() {
      return pem(pkcs8(key));
    }

    /** Writes both as PEM; the key file is readable by its owner only. */
    public void write(Path certificateFile, Path keyFile) {
      writePem(certificateFile, certificate, false);
      writePem(keyFile, pkcs8(key), true);
    }
  }

  /** A new self-signed CA named {@code name}, valid from now for {@code validity}. */
  public static CertificateAuthority create(String name, Duration validity) {
    KeyPair pair = newKeyPair();
    Instant now = Instant.now();
    X500Name subject = subject(name);
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              subject,
              serial(),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(now.plus(validity)),
              subject,
              pair.getPublic());
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      b.addExtension(
          Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
      return new CertificateAuthority(sign(b, pair.getPrivate()), pair.getPrivate());
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot create a CA certificate: " + e, e);
    }
  }

  /**
   * The CA whose certificate and key were written by {@link #writeCertificate} and {@link
   * #writeKey}.
   */
  public static CertificateAuthority load(Path certificateFile, Path keyFile) {
    X509Certificate cert = PeerTls.certificates("CA certificate", certificateFile).get(0);
    PrivateKey key = PeerTls.privateKey("CA key", keyFile);
    return new CertificateAuthority(cert, key);
  }

  /** Writes the CA's private key as PEM, readable by its owner only. Keep it off the nodes. */
  public void writeKey(Path file) {
    writePem(file, pkcs8(key), true);
  }

  /** The CA's certificate (what every node and client trusts). */
  public X509Certificate certificate() {
    return certificate;
  }

  /** The CA's certificate as PEM text. */
  public String certificatePem() {
    return pem(certificate);
  }

  /** Writes the CA's certificate as PEM (the {@code tls.ca_file} of every node). */
  public void writeCertificate(Path file) {
    writePem(file, certificate, false);
  }

  /**
   * A node certificate for {@code hosts} (DNS names or IP addresses), valid for {@code validity}.
   */
  public Issued issueNode(Collection<String> hosts, Duration validity) {
    Instant now = Instant.now();
    return issue(
        PeerTls.DEFAULT_PEER_NAME, hosts, now.minus(Duration.ofMinutes(5)), now.plus(validity));
  }

  /**
   * A certificate for {@code commonName}, with {@code hosts} as subject alternative names, valid
   * from {@code notBefore} to {@code notAfter}, usable by servers and clients.
   */
  public Issued issue(
      String commonName, Collection<String> hosts, Instant notBefore, Instant notAfter) {
    KeyPair pair = newKeyPair();
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              certificate,
              serial(),
              Date.from(notBefore),
              Date.from(notAfter),
              subject(commonName),
              pair.getPublic());
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      b.addExtension(
          Extension.extendedKeyUsage,
          false,
          new ExtendedKeyUsage(
              new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      b.addExtension(
          Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
      if (!hosts.isEmpty()) {
        b.addExtension(Extension.subjectAlternativeName, false, alternativeNames(hosts));
      }
      return new Issued(sign(b, key), pair.getPrivate());
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot issue a certificate for " + commonName + ": " + e, e);
    }
  }

  private static GeneralNames alternativeNames(Collection<String> hosts) {
    List<GeneralName> names = new ArrayList<>();
    for (String h : hosts) {
      names.add(
          isAddressLiteral(h)
              ? new GeneralName(GeneralName.iPAddress, h)
              : new GeneralName(GeneralName.dNSName, h));
    }
    return new GeneralNames(names.toArray(new GeneralName[0]));
  }

  /** The key as PKCS#8 ("BEGIN PRIVATE KEY"), the form openssl and Netty read. */
  private static Object pkcs8(PrivateKey key) {
    try {
      return new JcaPKCS8Generator(key, null);
    } catch (PemGenerationException e) {
      throw new IllegalStateException("cannot encode a " + key.getAlgorithm() + " key: " + e, e);
    }
  }

  /** An IPv4 or IPv6 literal, told apart from a DNS name without a lookup. */
  private static boolean isAddressLiteral(String host) {
    return host.indexOf(':') >= 0 || host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
  }

  private static X500Name subject(String commonName) {
    return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder(SIGNATURE).build(signer)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static KeyPair newKeyPair() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("no EC P-256 key generator in this JVM: " + e, e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM);
  }

  private static String pem(Object value) {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(text)) {
      w.writeObject(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return text.toString();
  }

  private static void writePem(Path file, Object value, boolean secret) {
    String text = pem(value);
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.deleteIfExists(file);
      if (secret) {
        try {
          Files.createFile(
              file,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException notPosix) {
          Files.createFile(file);
        }
      }
      Files.writeString(
          file, text, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
