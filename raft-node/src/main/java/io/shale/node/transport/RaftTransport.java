package io.shale.node.transport;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.grpc.server.GrpcServices;

/**
 * How a node's Raft traffic travels: the Raft server's gRPC parameters and the builder of every
 * Ratis client the node opens (forwarding, administration, pressure polls, tests' clients). With
 * {@link PeerTls} both sides speak mutual TLS, so Ratis's server, admin and client services on the
 * Raft port accept only cluster nodes; without it they are plaintext.
 */
public final class RaftTransport {
  private final RaftProperties properties;
  private final GrpcTlsConfig tls;

  /**
   * @param properties the Ratis settings every client starts from (a client may copy and adjust)
   * @param tls the node's peer TLS, or null for plaintext
   */
  public RaftTransport(RaftProperties properties, PeerTls tls) {
    this.properties = properties;
    this.tls = tls == null ? null : tls.ratis();
  }

  /** Whether the Raft port and the node's Ratis clients speak mutual TLS. */
  public boolean secure() {
    return tls != null;
  }

  /** The Ratis settings clients start from. */
  public RaftProperties properties() {
    return properties;
  }

  /** Parameters for the Raft server: {@code customizer} on its services, TLS when configured. */
  public Parameters serverParameters(GrpcServices.Customizer customizer) {
    Parameters p = new Parameters();
    GrpcConfigKeys.Server.setServicesCustomizer(p, customizer);
    if (tls != null) {
      GrpcConfigKeys.Server.setTlsConf(p, tls);
      GrpcConfigKeys.Admin.setTlsConf(p, tls);
      GrpcConfigKeys.Client.setTlsConf(p, tls);
      GrpcConfigKeys.TLS.setConf(p, tls);
    }
    return p;
  }

  /** A Ratis client builder with the shared settings and the node's TLS. */
  public RaftClient.Builder client() {
    return client(properties);
  }

  /** A Ratis client builder with {@code adjusted} settings and the node's TLS. */
  public RaftClient.Builder client(RaftProperties adjusted) {
    RaftClient.Builder b = RaftClient.newBuilder().setProperties(adjusted);
    if (tls != null) {
      Parameters p = new Parameters();
      GrpcConfigKeys.Client.setTlsConf(p, tls);
      GrpcConfigKeys.Admin.setTlsConf(p, tls);
      GrpcConfigKeys.TLS.setConf(p, tls);
      b.setParameters(p);
    }
    return b;
  }
}
