package io.shale.ops;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * What the {@code ops/bin} scripts' programs share when reading their arguments. The scripts change
 * to the repository root before starting Java and pass the user's directory as {@code
 * -Dshale.ops.cwd}, so relative paths must be resolved against that, not the JVM's.
 */
public final class ScriptArguments {
  private ScriptArguments() {}

  /** A path argument, relative ones resolved against the directory the user ran the script from. */
  public static Path callerPath(String arg) {
    Path p = Paths.get(arg);
    String cwd = System.getProperty("shale.ops.cwd");
    return p.isAbsolute() || cwd == null ? p : Paths.get(cwd).resolve(p).normalize();
  }

  /** The value of option {@code name} at {@code args[i]}, or an error naming the option. */
  public static String need(String[] args, int i, String name) {
    if (i >= args.length) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return args[i];
  }
}
