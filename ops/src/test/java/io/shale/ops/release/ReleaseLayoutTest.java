package io.shale.ops.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReleaseLayoutTest {
  @TempDir Path home;
  private ReleaseLayout layout;

  @BeforeEach
  void layout() throws IOException {
    Files.createDirectories(home.resolve("runtime"));
    Files.createDirectories(home.resolve("lib"));
    Files.writeString(home.resolve("runtime/release"), "JAVA_VERSION=\"25.0.3\"\n");
    // Names whose order differs between byte order and a locale's collation.
    for (String jar : List.of("b-1.jar", "B-2.jar", "a_x.jar", "a-x.jar")) {
      Files.writeString(home.resolve("lib").resolve(jar), "jar " + jar);
    }
    Files.writeString(home.resolve("lib/notes.txt"), "not a jar");
    Files.writeString(home.resolve(ReleaseLayout.AOT_CACHE), "cache");
    layout = new ReleaseLayout(home);
  }

  @Test
  void theClassPathIsEveryJarInByteOrderOfTheirNames() throws IOException {
    assertThat(layout.jars().stream().map(p -> p.getFileName().toString()))
        .containsExactly("B-2.jar", "a-x.jar", "a_x.jar", "b-1.jar");
    assertThat(layout.classPath()).startsWith(home.resolve("lib/B-2.jar").toString() + ":");
  }

  @Test
  void theCacheIsUsableOnlyWithTheJarsAndRuntimeItWasMadeFor() throws IOException {
    assertThat(layout.aotCacheUsable()).as("no fingerprint yet").isFalse();
    layout.writeFingerprint();
    assertThat(layout.aotCacheUsable()).isTrue();

    Files.writeString(home.resolve("lib/a-x.jar"), "jar a-x.jar, rebuilt");
    assertThat(layout.aotCacheUsable()).as("a jar changed").isFalse();
    layout.writeFingerprint();
    Files.writeString(home.resolve("lib/c.jar"), "a new jar");
    assertThat(layout.aotCacheUsable()).as("a jar added").isFalse();
    Files.delete(home.resolve("lib/c.jar"));
    assertThat(layout.aotCacheUsable()).isTrue();
    Files.writeString(home.resolve("runtime/release"), "JAVA_VERSION=\"25.0.4\"\n");
    assertThat(layout.aotCacheUsable()).as("another runtime").isFalse();
  }

  @Test
  void theFingerprintIsWhatSha256sumChecks() throws Exception {
    layout.writeFingerprint();
    assertThat(sha256sumCheck()).isZero();
    Files.writeString(home.resolve("lib/b-1.jar"), "changed");
    assertThat(sha256sumCheck()).isNotZero();
  }

  @Test
  void theStartScriptsAgreeWithThisClass() throws Exception {
    assertThat(scriptSaysUsable()).isFalse();
    layout.writeFingerprint();
    assertThat(scriptSaysUsable()).isTrue();
    Files.writeString(home.resolve("lib/c.jar"), "a new jar");
    assertThat(scriptSaysUsable()).as("a jar added").isFalse();
    Files.delete(home.resolve("lib/c.jar"));
    Files.writeString(home.resolve("lib/B-2.jar"), "rebuilt");
    assertThat(scriptSaysUsable()).as("a jar changed").isFalse();
  }

  @Test
  void theScriptRemembersAMatchUntilAFileIsWrittenAgain() throws Exception {
    layout.writeFingerprint();
    Path checked = home.resolve("lib/shale.aot.checked");
    assertThat(checked).doesNotExist();
    assertThat(scriptSaysUsable()).isTrue();
    assertThat(checked).as("the match, remembered").exists();
    String remembered = Files.readString(checked);
    assertThat(scriptSaysUsable()).as("from what it remembered").isTrue();
    assertThat(Files.readString(checked)).isEqualTo(remembered);

    // Same length, the old modification time put back: only the change time tells, and the
    // hashes then refuse the jar.
    Path jar = home.resolve("lib/b-1.jar");
    FileTime modified = Files.getLastModifiedTime(jar);
    String before = Files.readString(jar);
    Files.writeString(jar, before.toUpperCase(Locale.ROOT));
    Files.setLastModifiedTime(jar, modified);
    assertThat(scriptSaysUsable()).as("a jar rewritten in place").isFalse();
    // Written back as it was: the hashes match again, and the new stat is remembered.
    Files.writeString(jar, before);
    assertThat(scriptSaysUsable()).isTrue();
    assertThat(Files.readString(checked)).isNotEqualTo(remembered);
  }

  /** aot_cache_usable of ops/bin/lib/ops-main.sh, which shale-node asks before using the cache. */
  private boolean scriptSaysUsable() throws Exception {
    Path script = Path.of("bin/lib/ops-main.sh").toAbsolutePath(); // the ops module's directory
    Process p =
        new ProcessBuilder(
                "bash",
                "-c",
                "source \"$0\" && aot_cache_usable \"$1\"",
                script.toString(),
                home.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isIn(0, 1);
    return p.exitValue() == 0;
  }

  /** The check ops/bin/lib/ops-main.sh makes before it gives a node the cache. */
  private int sha256sumCheck() throws Exception {
    Process p =
        new ProcessBuilder("sha256sum", "--quiet", "--status", "-c", ReleaseLayout.AOT_SUMS)
            .directory(home.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as(out).isTrue();
    return p.exitValue();
  }
}
