package io.shale.node.transport;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * The mutual TLS of node-to-node traffic on the Raft port: this node's certificate and key, the
 * cluster's CA, and the one subject CN a peer's certificate must carry.
 *
 * <p>Invariant: a connection to or from the Raft port completes its handshake only when the other
 * side presents a certificate chaining to the CA whose subject CN is {@link #peerName()}. So a
 * client certificate from the same CA (a user's, whose CN names the user) cannot append entries,
 * vote or submit raw Ratis requests: only nodes can. etcd's {@code --peer-cert-allowed-cn} and
 * TiKV's {@code cert-allowed-cn} are the same rule.
 *
 * <p>{@link #load} checks everything an operator can get wrong before the node listens, and names
 * the file and the key in the TOML at fault.
 */
public final class PeerTls {
  /** The CN of node certificates unless {@code tls.peer_common_name} says otherwise. */
  public static final String DEFAULT_PEER_NAME = "shale-node";

  /** TLS versions offered: 1.3 and 1.2. */
  static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

  /**
   * Cipher suites offered and accepted, on every port and channel: TLS 1.3's, and TLS 1.2's with
   * ephemeral ECDH key exchange (forward secrecy) and an AEAD cipher (no CBC, no RSA key exchange),
   * Mozilla's "intermediate" set.
   */
  static final List<String> CIPHERS =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  /**
   * Where the PEM files are, as configured in {@code [tls]}, and how often they are looked at for a
   * change ({@code tls.reload_interval}).
   */
  public record Files(
      Path caFile, Path certFile, Path keyFile, String peerName, Duration reloadInterval) {
    /** How often a node looks for new certificate files unless told otherwise. */
    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(5);

    public Files(Path caFile, Path certFile, Path keyFile, String peerName) {
      this(caFile, certFile, keyFile, peerName, DEFAULT_RELOAD_INTERVAL);
    }

    /** What identifies the files' contents now: each one's size and modification time. */
    List<Object> stamp() {
      List<Object> out = new ArrayList<>();
      for (Path p : List.of(caFile, certFile, keyFile)) {
        try {
          out.add(java.nio.file.Files.size(p));
          out.add(java.nio.file.Files.getLastModifiedTime(p));
        } catch (IOException missing) {
          out.add(missing.getClass().getName());
        }
      }
      return out;
    }
  }

  /** What one read of the files gave: the chain, its key, the CA, and managers over them. */
  private record Material(
      List<Object> stamp,
      X509Certificate[] chain,
      X509ExtendedKeyManager keys,
      X509ExtendedTrustManager authorities) {}

  private final Files files;
  private volatile Material material;

  private PeerTls(Files files, Material material) {
    this.files = files;
    this.material = material;
  }

  /**
   * Reads and checks the files: each exists and parses, the certificate is valid at {@code now},
   * the key is the certificate's, the certificate chains to the CA and carries the peer CN.
   *
   * @throws IllegalArgumentException naming the {@code tls.*} key and the file at fault
   */
  public static PeerTls load(Files files, Instant now) {
    return new PeerTls(files, read(files, now));
  }

  /**
   * Reads the files again if they changed since they were last read, and from then on presents and
   * trusts what they hold: new handshakes use it, connections already open keep theirs. Files that
   * do not pass {@link #load}'s checks (one half-written, a key that is not the certificate's)
   * change nothing and are read again once they change again.
   *
   * @return true when new files were taken
   * @throws IllegalArgumentException naming the file at fault when changed files do not pass
   */
  public boolean reloadIfChanged(Instant now) {
    if (files.stamp().equals(material.stamp())) {
      return false;
    }
    Material fresh;
    try {
      fresh = read(files, now);
    } catch (IllegalArgumentException e) {
      // Not again until the files change once more.
      material =
          new Material(files.stamp(), material.chain(), material.keys(), material.authorities());
      throw e;
    }
    material = fresh;
    return true;
  }

  /** The files as configured. */
  public Files files() {
    return files;
  }

  private static Material read(Files files, Instant now) {
    List<Object> stamp = files.stamp();
    List<X509Certificate> authorities = certificates("tls.ca_file", files.caFile());
    List<X509Certificate> chain = certificates("tls.cert_file", files.certFile());
    PrivateKey key = privateKey("tls.key_file", files.keyFile());
    X509Certificate leaf = chain.get(0);
    if (now.isBefore(leaf.getNotBefore().toInstant())) {
      throw new IllegalArgumentException(
          "tls.cert_file: " + files.certFile() + " is not valid before " + leaf.getNotBefore());
    }
    if (now.isAfter(leaf.getNotAfter().toInstant())) {
      throw new IllegalArgumentException(
          "tls.cert_file: " + files.certFile() + " expired at " + leaf.getNotAfter());
    }
    if (!keyMatches(key, leaf)) {
      throw new IllegalArgumentException(
          "tls.key_file: "
              + files.keyFile()
              + " is not the private key of the certificate in "
              + files.certFile());
    }
    String problem = chainProblem(chain, authorities, now);
    if (problem != null) {
      throw new IllegalArgumentException(
          "tls.cert_file: "
              + files.certFile()
              + " is not issued by the CA in "
              + files.caFile()
              + " ("
              + problem
              + ")");
    }
    String cn = commonName(leaf);
    if (!files.peerName().equals(cn)) {
      throw new IllegalArgumentException(
          "tls.cert_file: "
              + files.certFile()
              + " has subject CN \""
              + cn
              + "\" but peers accept only \""
              + files.peerName()
              + "\" (tls.peer_common_name)");
    }
    X509Certificate[] certs = chain.toArray(new X509Certificate[0]);
    return new Material(stamp, certs, new NodeKey(key, certs), caTrustManager(files, authorities));
  }

  /** The CN every peer's certificate must carry. */
  public String peerName() {
    return files.peerName();
  }

  /** When this node's certificate expires. */
  public Instant notAfter() {
    return material.chain()[0].getNotAfter().toInstant();
  }

  /** The serial number of this node's certificate, as now presented. */
  public java.math.BigInteger serialNumber() {
    return material.chain()[0].getSerialNumber();
  }

  /**
   * Ratis's TLS settings: this node's key, the CA plus the peer-name rule, client auth required.
   */
  public GrpcTlsConfig ratis() {
    return GrpcTlsConfig.newBuilder()
        .setName("raft-" + files.certFile().getFileName())
        .setKeyManager(keyManager())
        .setTrustManager(trustManager())
        .setMutualTls(true)
        .setProtocols(PROTOCOLS)
        .setCipherSuites(CIPHERS)
        .build();
  }

  /** Presents this node's certificate: the one last read, at each handshake. */
  KeyManager keyManager() {
    return new CurrentKeys(() -> material.keys());
  }

  /** Trusts certificates that chain to the CA and whose CN is the peer name. */
  X509ExtendedTrustManager trustManager() {
    return new PeerNameCheck(caTrustManager(), files.peerName());
  }

  /**
   * The client API port's TLS: this node's certificate; a client may present a certificate, which
   * must then chain to the CA (its CN names the user), or none.
   */
  public SslContext apiServer() {
    try {
      return GrpcSslContexts.configure(SslContextBuilder.forServer(keyManager()))
          .trustManager(caTrustManager())
          .clientAuth(ClientAuth.OPTIONAL)
          .protocols(PROTOCOLS)
          .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
          .build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build the API port's TLS context", e);
    }
  }

  /** The client side of this node's channels to other nodes: mutual TLS, peers only. */
  SslContext peerClient() {
    try {
      return GrpcSslContexts.forClient()
          .keyManager(keyManager())
          .trustManager(trustManager())
          .protocols(PROTOCOLS)
          .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
          .build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build the TLS context of peer channels", e);
    }
  }

  /** Trusts certificates that chain to the CA: the one last read, at each handshake. */
  private X509ExtendedTrustManager caTrustManager() {
    return new CurrentTrust(() -> material.authorities());
  }

  private static X509ExtendedTrustManager caTrustManager(
      Files files, List<X509Certificate> authorities) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < authorities.size(); i++) {
        store.setCertificateEntry("ca" + i, authorities.get(i));
      }
      TrustManagerFactory f =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init(store);
      for (TrustManager t : f.getTrustManagers()) {
        if (t instanceof X509ExtendedTrustManager x) {
          return x;
        }
      }
      throw new IllegalStateException("the JDK offers no X509ExtendedTrustManager");
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build a trust manager for " + files.caFile(), e);
    }
  }

  /** The subject CN of {@code c}, or "" when it has none. */
  public static String commonName(X509Certificate c) {
    try {
      for (Rdn rdn : new LdapName(c.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          return String.valueOf(rdn.getValue());
        }
      }
      return "";
    } catch (InvalidNameException e) {
      return "";
    }
  }

  static List<X509Certificate> certificates(String key, Path file) {
    byte[] bytes = read(key, file);
    try (InputStream in = new java.io.ByteArrayInputStream(bytes)) {
      List<X509Certificate> out = new ArrayList<>();
      for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) {
        throw new IllegalArgumentException(key + ": " + file + " holds no PEM certificate");
      }
      return out;
    } catch (CertificateException | IOException e) {
      throw new IllegalArgumentException(
          key + ": " + file + " is not a PEM certificate: " + e.getMessage(), e);
    }
  }

  static PrivateKey privateKey(String what, Path file) {
    return PemKeys.read(what, file, read(what, file));
  }

  private static byte[] read(String key, Path file) {
    if (!java.nio.file.Files.exists(file)) {
      throw new IllegalArgumentException(key + ": " + file + " does not exist");
    }
    try {
      return java.nio.file.Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException(key + ": cannot read " + file + ": " + e, e);
    }
  }

  /** Signs a random challenge with the key and verifies it with the certificate's public key. */
  private static boolean keyMatches(PrivateKey key, X509Certificate cert) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "EC", "ECDSA" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> null;
        };
    if (algorithm == null
        || !cert.getPublicKey().getAlgorithm().equals(key.getAlgorithm())
            && !(key.getAlgorithm().startsWith("EC")
                && cert.getPublicKey().getAlgorithm().startsWith("EC"))) {
      return false;
    }
    try {
      byte[] challenge = new byte[32];
      new SecureRandom().nextBytes(challenge);
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(challenge);
      byte[] signed = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(cert.getPublicKey());
      v.update(challenge);
      return v.verify(signed);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /** Why {@code chain} does not chain to one of {@code authorities} at {@code now}, or null. */
  private static String chainProblem(
      List<X509Certificate> chain, List<X509Certificate> authorities, Instant now) {
    try {
      Set<TrustAnchor> anchors = new HashSet<>();
      for (X509Certificate a : authorities) {
        anchors.add(new TrustAnchor(a, null));
      }
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false);
      params.setDate(Date.from(now));
      CertPathValidator.getInstance("PKIX")
          .validate(CertificateFactory.getInstance("X.509").generateCertPath(chain), params);
      return null;
    } catch (GeneralSecurityException e) {
      return e.getMessage();
    }
  }

  /**
   * The CA's trust manager plus the peer-name rule, on both sides of a handshake. The JDK's manager
   * it wraps still checks host names where the connection asks for it.
   */
  private static final class PeerNameCheck extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager ca;
    private final String peerName;

    PeerNameCheck(X509ExtendedTrustManager ca, String peerName) {
      this.ca = ca;
      this.peerName = peerName;
    }

    private void requirePeer(X509Certificate[] chain) throws CertificateException {
      String cn = commonName(chain[0]);
      if (!peerName.equals(cn)) {
        throw new CertificateException(
            "certificate CN \"" + cn + "\" is not a cluster node (\"" + peerName + "\")");
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      ca.checkClientTrusted(chain, authType, socket);
      requirePeer(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      ca.checkServerTrusted(chain, authType, socket);
      requirePeer(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      ca.checkClientTrusted(chain, authType, engine);
      requirePeer(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      ca.checkServerTrusted(chain, authType, engine);
      requirePeer(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      ca.checkClientTrusted(chain, authType);
      requirePeer(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      ca.checkServerTrusted(chain, authType);
      requirePeer(chain);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return ca.getAcceptedIssuers();
    }
  }
}
