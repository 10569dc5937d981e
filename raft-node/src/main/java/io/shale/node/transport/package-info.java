/**
 * How a node reaches other nodes: {@link io.shale.node.transport.NodeChannels} builds every
 * node-to-node gRPC channel.
 */
package io.shale.node.transport;
