package io.shale.ops.release;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A release layout: {@code runtime/} (the jlink'd Java the node runs on), {@code lib/*.jar} (its
 * class path, in file-name order so that it never depends on the file system's), and {@code
 * lib/shale.aot}, the ahead-of-time cache of a training run, with {@code lib/shale.aot.sha256}.
 *
 * <p>The fingerprint is {@code sha256sum}'s output over {@code runtime/release} and every jar in
 * class-path order, so that {@code ops/bin/lib/ops-main.sh} checks it with {@code sha256sum -c} and
 * this class byte for byte alike. It exists because the JVM does not refuse a cache whose jars
 * changed: JDK 25.0.3 served a class from the cache after its jar had been rebuilt with other code.
 */
public record ReleaseLayout(Path home) {
  /** The cache, relative to the layout's top. */
  public static final String AOT_CACHE = "lib/shale.aot";

  /** The fingerprint the cache was made for, relative to the layout's top. */
  public static final String AOT_SUMS = "lib/shale.aot.sha256";

  /** The file that names the runtime's version and modules (jlink writes it). */
  static final String RUNTIME_RELEASE = "runtime/release";

  /** The layout's {@code java}. */
  public Path java() {
    return home.resolve("runtime/bin/java");
  }

  /** The jars of {@code lib/}, in name order: the node's class path. */
  public List<Path> jars() throws IOException {
    List<Path> jars = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(home.resolve("lib"), "*.jar")) {
      for (Path p : s) {
        if (Files.isRegularFile(p)) {
          jars.add(p);
        }
      }
    }
    // Byte order of the names, as the shell's glob under LC_ALL=C (jar names are ASCII).
    jars.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
    return jars;
  }

  /** The class path of a node: every jar, absolute, in name order. */
  public String classPath() throws IOException {
    return jars().stream()
        .map(p -> p.toAbsolutePath().toString())
        .collect(Collectors.joining(java.io.File.pathSeparator));
  }

  public Path aotCache() {
    return home.resolve(AOT_CACHE);
  }

  /**
   * What the cache must have been made for: {@code sha256sum}'s lines ({@code HASH PATH}) over the
   * runtime's release file and every jar, in class-path order.
   */
  public String fingerprint() throws IOException {
    StringBuilder out = new StringBuilder();
    List<String> files = new ArrayList<>();
    files.add(RUNTIME_RELEASE);
    for (Path jar : jars()) {
      files.add("lib/" + jar.getFileName());
    }
    for (String f : files) {
      out.append(sha256(home.resolve(f))).append("  ").append(f).append('\n');
    }
    return out.toString();
  }

  /** Records the fingerprint of the runtime and jars a freshly made cache belongs to. */
  public void writeFingerprint() throws IOException {
    Files.writeString(home.resolve(AOT_SUMS), fingerprint());
  }

  /** Whether the cache exists and was made for exactly this runtime and these jars. */
  public boolean aotCacheUsable() throws IOException {
    Path sums = home.resolve(AOT_SUMS);
    return Files.isRegularFile(aotCache())
        && Files.isRegularFile(sums)
        && Files.readString(sums).equals(fingerprint());
  }

  private static String sha256(Path file) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e); // every Java runtime has SHA-256
    }
    byte[] buffer = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }
}
