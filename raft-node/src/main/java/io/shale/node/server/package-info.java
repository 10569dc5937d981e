/**
 * Running a node: {@link io.shale.node.server.ShaleNode} builds the Ratis server (storage
 * directory, ports, read option, election timeouts, FORMAT or RECOVER) around the state machine,
 * from its TOML configuration ({@link io.shale.node.server.NodeConfig}); {@link
 * io.shale.node.server.NodeMain} is the process entry point; {@link
 * io.shale.node.server.HttpEndpoints} serves {@code /metrics}, {@code /health} and {@code /ready}.
 * The guards around Ratis's own behaviour live in {@code io.shale.node.ratis}.
 */
package io.shale.node.server;
