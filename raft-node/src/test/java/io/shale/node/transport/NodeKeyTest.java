package io.shale.node.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.KeyStore;
import java.security.Principal;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

/** {@link NodeKey} offers its key exactly when the JDK's own key manager would. */
class NodeKeyTest {
  private static final List<String> KEY_TYPES =
      List.of("EC", "RSA", "RSASSA-PSS", "EdDSA", "EC_EC", "EC_RSA", "RSA_EC", "DSA", "", "ec");

  private final CertificateAuthority ca =
      CertificateAuthority.create("test-ca", Duration.ofDays(1));
  private final CertificateAuthority other =
      CertificateAuthority.create("other-ca", Duration.ofDays(1));
  private final CertificateAuthority.Issued node =
      ca.issueNode(List.of("127.0.0.1"), Duration.ofDays(1));

  @Test
  void choosesTheAliasForEveryKeyTypeAndIssuerListTheJdkWould() throws Exception {
    for (X509Certificate[] chain :
        List.of(
            new X509Certificate[] {node.certificate()},
            new X509Certificate[] {node.certificate(), ca.certificate()})) {
      NodeKey ours = new NodeKey(node.key(), chain);
      X509ExtendedKeyManager jdks = jdkKeyManager(chain);
      for (Principal[] issuers : issuerLists()) {
        for (String keyType : KEY_TYPES) {
          boolean jdkOffers = jdks.chooseEngineServerAlias(keyType, issuers, null) != null;
          assertThat(ours.chooseEngineServerAlias(keyType, issuers, null) != null)
              .as("server, key type '%s', chain of %d, issuers %s", keyType, chain.length, issuers)
              .isEqualTo(jdkOffers);
          assertThat(ours.chooseEngineClientAlias(new String[] {keyType}, issuers, null) != null)
              .as("client, key type '%s'", keyType)
              .isEqualTo(
                  jdks.chooseEngineClientAlias(new String[] {keyType}, issuers, null) != null);
        }
      }
    }
  }

  @Test
  void givesItsKeyAndChainUnderItsAliasOnly() {
    X509Certificate[] chain = {node.certificate(), ca.certificate()};
    NodeKey keys = new NodeKey(node.key(), chain);
    String alias = keys.chooseEngineServerAlias("EC", null, null);
    assertThat(alias).isEqualTo(NodeKey.ALIAS);
    assertThat(keys.getPrivateKey(alias)).isSameAs(node.key());
    assertThat(keys.getCertificateChain(alias)).containsExactly(chain);
    assertThat(keys.getPrivateKey("other")).isNull();
    assertThat(keys.getCertificateChain("other")).isNull();
    keys.getCertificateChain(alias)[0] = null; // a caller's copy, not the manager's chain
    assertThat(keys.getCertificateChain(alias)[0]).isSameAs(node.certificate());
    assertThat(keys.chooseEngineClientAlias(new String[] {"RSA", "EC"}, null, null))
        .isEqualTo(NodeKey.ALIAS);
    assertThat(keys.chooseEngineClientAlias(null, null, null)).isNull();
  }

  private List<Principal[]> issuerLists() {
    List<Principal[]> lists = new ArrayList<>();
    lists.add(null);
    lists.add(new Principal[0]);
    lists.add(new Principal[] {ca.certificate().getSubjectX500Principal()});
    lists.add(new Principal[] {other.certificate().getSubjectX500Principal()});
    lists.add(
        new Principal[] {
          new X500Principal("CN=nobody"), ca.certificate().getSubjectX500Principal()
        });
    return lists;
  }

  private X509ExtendedKeyManager jdkKeyManager(X509Certificate[] chain) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry(NodeKey.ALIAS, node.key(), new char[0], chain);
    KeyManagerFactory f = KeyManagerFactory.getInstance("SunX509");
    f.init(store, new char[0]);
    for (KeyManager k : f.getKeyManagers()) {
      if (k instanceof X509ExtendedKeyManager x) {
        return x;
      }
    }
    throw new AssertionError("no X509ExtendedKeyManager");
  }
}
