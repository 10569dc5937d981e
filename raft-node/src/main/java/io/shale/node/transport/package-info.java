/**
 * How a node reaches other nodes and who may reach it. The Raft port is the peer listener: it
 * carries Ratis's traffic ({@link io.shale.node.transport.RaftTransport}) and the services only
 * nodes may call ({@link io.shale.node.transport.PeerServices}: snapshot transfer, a node's own
 * status, forwarded work), in mutual TLS with {@link io.shale.node.transport.PeerTls} (the node's
 * certificate, the CA, the peer CN rule). {@link io.shale.node.transport.PeerChannels} opens this
 * node's channels to those services; {@link io.shale.node.transport.CertificateAuthority} issues a
 * cluster's certificates.
 */
package io.shale.node.transport;
