package io.shale.node.transport;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A key manager that asks, at every handshake, for the one {@link PeerTls} holds now: TLS contexts
 * built once (Ratis's, the API server's, peer channels') present a reloaded certificate from the
 * next handshake on.
 */
final class CurrentKeys extends X509ExtendedKeyManager {
  private final Supplier<X509ExtendedKeyManager> current;

  CurrentKeys(Supplier<X509ExtendedKeyManager> current) {
    this.current = current;
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return current.get().getClientAliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return current.get().chooseClientAlias(keyType, issuers, socket);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return current.get().getServerAliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return current.get().chooseServerAlias(keyType, issuers, socket);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return current.get().chooseEngineClientAlias(keyType, issuers, engine);
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return current.get().chooseEngineServerAlias(keyType, issuers, engine);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return current.get().getCertificateChain(alias);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return current.get().getPrivateKey(alias);
  }
}
