package io.shale.node.server;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version and commit this build came from, as {@code mvn package} stamps them into {@code
 * shale-release.properties} on the classpath (the release package, or the source tree once built);
 * "unknown" where no stamp is found.
 */
public final class ReleaseVersion {
  private ReleaseVersion() {}

  /** Prints "NAME VERSION (commit COMMIT)" for the scripts' {@code --version}. */
  public static void main(String[] args) {
    System.out.println((args.length > 0 ? args[0] + " " : "") + describe());
  }

  /** "VERSION (commit COMMIT)". */
  public static String describe() {
    Properties p = new Properties();
    try (InputStream in =
        ReleaseVersion.class.getClassLoader().getResourceAsStream("shale-release.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException unreadable) {
      // described as unknown below
    }
    return p.getProperty("version", "unknown")
        + " (commit "
        + p.getProperty("commit", "unknown")
        + ")";
  }
}
