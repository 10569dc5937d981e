/**
 * shalectl, the command-line tool ({@link io.shale.ops.cli.Shalectl}, picocli): key commands
 * ({@code KeyCommands}) and cluster commands ({@code ClusterCommands}) over the Java SDK, with
 * table or JSON output and exit codes scripts can test.
 */
package io.shale.ops.cli;
