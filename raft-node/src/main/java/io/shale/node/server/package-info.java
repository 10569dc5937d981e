/**
 * Running a node: {@link io.shale.node.server.ShaleNode} builds the Ratis server (storage
 * directory, ports, read option, election timeouts, FORMAT or RECOVER) around the state machine.
 */
package io.shale.node.server;
