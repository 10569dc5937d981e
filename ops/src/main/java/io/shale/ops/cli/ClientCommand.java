package io.shale.ops.cli;

import io.shale.client.ShaleClient;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A shalectl command that talks to the cluster: it reads the root's options (endpoints, output,
 * deadline), opens a client for the call and closes it after.
 */
abstract class ClientCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  Shalectl root() {
    return (Shalectl) spec.root().userObject();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  @Override
  public Integer call() throws Exception {
    Output out = root().output(spec.commandLine().getOut()); // a bad --output fails first
    try (ShaleClient client = root().client()) {
      return run(client, out);
    }
  }

  abstract int run(ShaleClient client, Output out) throws Exception;
}
