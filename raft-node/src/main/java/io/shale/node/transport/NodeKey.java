package io.shale.node.transport;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Locale;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A key manager holding exactly one private key and its certificate chain, under the alias {@link
 * #ALIAS}, with no key store behind it.
 *
 * <p>Why not the JDK's {@code KeyManagerFactory}: it takes a key store, and a PKCS#12 store
 * encrypts a key as it is stored and decrypts it as the factory reads it, with PBKDF2 both ways. In
 * a node's first second that code runs interpreted and took most of the 1.6 s a TLS node spent
 * before it started Raft, against 0.2 s without TLS (JFR of a restart, docs/benchmarks.md "Warm
 * start").
 *
 * <p>Invariant: an alias is offered only for a key type and issuer list the chain satisfies, by the
 * rules of the JDK's own {@code SunX509} key manager: the key type is the leaf's public-key
 * algorithm, optionally followed by {@code _SIGNER} (TLS 1.2: the algorithm of the key that signed
 * the leaf); when the peer names issuers, some certificate of the chain must be issued by one.
 */
final class NodeKey extends X509ExtendedKeyManager {
  /** The one alias this manager answers to. */
  static final String ALIAS = "node";

  private final PrivateKey key;
  private final X509Certificate[] chain;

  NodeKey(PrivateKey key, X509Certificate[] chain) {
    if (chain.length == 0) {
      throw new IllegalArgumentException("a certificate chain needs at least its leaf");
    }
    this.key = key;
    this.chain = chain.clone();
  }

  /** Whether this key serves a handshake asking for {@code keyType} from {@code issuers}. */
  boolean fits(String keyType, Principal[] issuers) {
    if (keyType == null) {
      return false;
    }
    String keyAlgorithm = keyType;
    String signer = null;
    int underscore = keyType.indexOf('_');
    if (underscore >= 0) {
      keyAlgorithm = keyType.substring(0, underscore);
      signer = keyType.substring(underscore + 1);
    }
    if (!keyAlgorithm.equals(chain[0].getPublicKey().getAlgorithm())) {
      return false;
    }
    if (signer != null && !signedBy(signer)) {
      return false;
    }
    return issuers == null || issuers.length == 0 || issuedByOneOf(issuers);
  }

  private boolean signedBy(String signer) {
    if (chain.length > 1) {
      return signer.equals(chain[1].getPublicKey().getAlgorithm());
    }
    return chain[0]
        .getSigAlgName()
        .toUpperCase(Locale.ROOT)
        .contains("WITH" + signer.toUpperCase(Locale.ROOT));
  }

  private boolean issuedByOneOf(Principal[] issuers) {
    for (X509Certificate c : chain) {
      for (Principal issuer : issuers) {
        if (c.getIssuerX500Principal().equals(issuer)) {
          return true;
        }
      }
    }
    return false;
  }

  private String alias(String keyType, Principal[] issuers) {
    return fits(keyType, issuers) ? ALIAS : null;
  }

  private String alias(String[] keyTypes, Principal[] issuers) {
    if (keyTypes != null) {
      for (String keyType : keyTypes) {
        if (fits(keyType, issuers)) {
          return ALIAS;
        }
      }
    }
    return null;
  }

  private String[] aliases(String keyType, Principal[] issuers) {
    return fits(keyType, issuers) ? new String[] {ALIAS} : null;
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return aliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return alias(keyType, issuers);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return alias(keyType, issuers);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return aliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return alias(keyType, issuers);
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return alias(keyType, issuers);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return ALIAS.equals(alias) ? chain.clone() : null;
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return ALIAS.equals(alias) ? key : null;
  }
}
