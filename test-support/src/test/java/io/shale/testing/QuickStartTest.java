package io.shale.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * client-sdk/README.md's quick start, compiled and run as written against a real cluster; only the
 * endpoints are replaced by the test cluster's.
 */
class QuickStartTest {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  @TempDir Path dir;

  @Test
  void theReadmeQuickStartCompilesAndRuns() throws Exception {
    Path readme =
        Path.of(System.getProperty("basedir", "."))
            .toAbsolutePath()
            .getParent()
            .resolve("client-sdk/README.md");
    String text = Files.readString(readme);
    int section = text.indexOf("## Quick start");
    int open = text.indexOf("```java\n", section) + "```java\n".length();
    String code = text.substring(open, text.indexOf("```", open));
    assertThat(code.lines().count())
        .as("a quick start that fits on a screen")
        .isLessThanOrEqualTo(25);
    String endpoints = "\"127.0.0.1:7201\", \"127.0.0.1:7202\", \"127.0.0.1:7203\"";
    assertThat(code).contains(endpoints);
    code =
        code.replace(
            endpoints,
            String.join(", ", cluster.endpoints().stream().map(e -> '"' + e + '"').toList()));

    Path source = dir.resolve("QuickStart.java");
    Files.writeString(source, code);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int rc =
        javac.run(
            null,
            null,
            errors,
            "-classpath",
            System.getProperty("java.class.path"),
            "-d",
            dir.toString(),
            source.toString());
    assertThat(rc).as(errors.toString(StandardCharsets.UTF_8)).isZero();

    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream stdout = System.out;
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      loader
          .loadClass("QuickStart")
          .getMethod("main", String[].class)
          .invoke(null, (Object) new String[0]);
    } finally {
      System.setOut(stdout);
    }
    List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(lines).hasSize(4);
    assertThat(lines.get(0)).matches("hello at index \\d+");
    assertThat(lines.subList(1, 4))
        .containsExactly("updated: true", "user/1 = ada", "user/2 = grace");
    assertThat(cluster.client().get("greeting").valueUtf8()).isEqualTo("hello, world");
  }
}
