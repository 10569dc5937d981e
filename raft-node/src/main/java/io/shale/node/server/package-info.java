/**
 * Running a node: {@link io.shale.node.server.ShaleNode} builds the Ratis server (storage
 * directory, ports, read option, election timeouts, FORMAT or RECOVER) around the state machine,
 * and owns the node's guards around Ratis: {@link io.shale.node.server.RaftRecipientCheck} (Raft
 * messages for another node are refused) and {@link io.shale.node.server.LeftoverSenders} (a new
 * leader that still sends to a removed peer steps down).
 */
package io.shale.node.server;
