/**
 * How a node reaches other nodes and who may reach it: {@link io.shale.node.transport.NodeChannels}
 * builds every node-to-node gRPC channel on the API port; {@link
 * io.shale.node.transport.RaftTransport} carries the Raft port's traffic, in mutual TLS with {@link
 * io.shale.node.transport.PeerTls} (the node's certificate, the CA, the peer CN rule); {@link
 * io.shale.node.transport.CertificateAuthority} issues a cluster's certificates.
 */
package io.shale.node.transport;
