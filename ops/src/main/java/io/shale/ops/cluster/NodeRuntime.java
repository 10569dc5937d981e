package io.shale.ops.cluster;

import io.shale.ops.release.ReleaseLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node child process runs on: its {@code java}, class path and the options that come with
 * them. Either this JVM's own (its {@code java.home} and class path), or a release layout's, as
 * {@code ops/bin/shale-node} starts a node (its runtime, its jars, its ahead-of-time cache while
 * the cache's fingerprint matches).
 */
record NodeRuntime(String java, String classPath, List<String> options) {
  private static final Logger LOG = LoggerFactory.getLogger(NodeRuntime.class);

  /** The system property naming a release layout to start nodes from (the scripts set it). */
  static final String HOME_PROPERTY = "shale.node.home";

  /** This JVM's java and class path. */
  static NodeRuntime current() {
    return new NodeRuntime(
        Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        System.getProperty("java.class.path"),
        List.of());
  }

  /**
   * The release layout's runtime and jars; its ahead-of-time cache when {@code useAotCache} and the
   * cache matches them.
   */
  static NodeRuntime of(ReleaseLayout layout, boolean useAotCache) {
    try {
      List<String> options = new ArrayList<>();
      if (useAotCache && layout.aotCacheUsable()) {
        options.add("-XX:AOTCache=" + layout.aotCache().toAbsolutePath());
      } else if (useAotCache) {
        LOG.warn(
            "{} is missing or was made for other jars or another runtime: nodes start without it",
            layout.aotCache());
      }
      return new NodeRuntime(layout.java().toString(), layout.classPath(), List.copyOf(options));
    } catch (IOException e) {
      throw new UncheckedIOException("reading the release layout " + layout.home(), e);
    }
  }

  /** Whether nodes started from a layout use its cache (default true; false for an A/B run). */
  static final String AOT_PROPERTY = "shale.node.aot";

  /**
   * The layout {@value #HOME_PROPERTY} names, with its cache unless {@value #AOT_PROPERTY} is
   * false; else this JVM's.
   */
  static NodeRuntime configured() {
    String home = System.getProperty(HOME_PROPERTY, "");
    boolean aot = Boolean.parseBoolean(System.getProperty(AOT_PROPERTY, "true"));
    return home.isBlank() ? current() : of(new ReleaseLayout(Path.of(home)), aot);
  }
}
