package io.shale.engine.testdata;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;

/**
 * Readable test scripts in {@code src/test/resources/testdata/<topic>/*.txt}, in the style of
 * Pebble's datadriven tests. A file is a sequence of cases separated by blank lines; lines starting
 * with {@code #} are comments. A case is a command line ({@code name arg arg ...}), optional input
 * lines, a {@code ----} line, and the expected output:
 *
 * <pre>
 * visible seq=5
 * a.5:put=x
 * ----
 * a=x
 * </pre>
 *
 * Each case becomes one dynamic test named by its file, line and command; the cases of a file run
 * in order, so a handler may keep state from one case to the next (a {@code define} followed by
 * queries). A mismatch shows the file and line with the expected and actual output.
 */
public final class DataDrivenFile {
  /** One case: its command, arguments, input lines, and expected output. */
  public record Case(
      String file,
      int line,
      String command,
      List<String> args,
      List<String> input,
      String expected) {
    /** The value of argument {@code name=value}, or {@code fallback}. */
    public String arg(String name, String fallback) {
      for (String a : args) {
        if (a.startsWith(name + "=")) {
          return a.substring(name.length() + 1);
        }
      }
      return fallback;
    }

    /** Whether the bare flag {@code name} is among the arguments. */
    public boolean has(String name) {
      return args.contains(name);
    }
  }

  private DataDrivenFile() {}

  /** Every {@code .txt} file under {@code testdata/<topic>} on the test classpath. */
  public static List<Path> files(String topic) {
    URL dir = DataDrivenFile.class.getResource("/testdata/" + topic);
    if (dir == null) {
      throw new IllegalStateException("no testdata/" + topic + " on the classpath");
    }
    try (Stream<Path> s = Files.list(Path.of(dir.toURI()))) {
      return s.filter(p -> p.toString().endsWith(".txt")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The cases of {@code file}, in order. */
  public static List<Case> parse(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    List<Case> cases = new ArrayList<>();
    String name = file.getParent().getFileName() + "/" + file.getFileName();
    int i = 0;
    while (i < lines.size()) {
      String l = lines.get(i);
      if (l.isBlank() || l.startsWith("#")) {
        i++;
        continue;
      }
      int line = i + 1;
      List<String> words = List.of(l.trim().split("\\s+"));
      List<String> input = new ArrayList<>();
      i++;
      while (i < lines.size() && !lines.get(i).equals("----")) {
        input.add(lines.get(i));
        i++;
      }
      if (i == lines.size()) {
        throw new IllegalArgumentException(name + ":" + line + ": no ---- after the command");
      }
      i++;
      List<String> expected = new ArrayList<>();
      while (i < lines.size() && !lines.get(i).isBlank()) {
        expected.add(lines.get(i));
        i++;
      }
      cases.add(
          new Case(
              name,
              line,
              words.get(0),
              words.subList(1, words.size()),
              input,
              String.join("\n", expected)));
    }
    return cases;
  }

  /**
   * One dynamic test per case of every file of {@code topic}; {@code handler} makes a fresh handler
   * for each file and returns, for a case, its actual output.
   */
  public static Stream<DynamicTest> tests(
      String topic, java.util.function.Supplier<Function<Case, String>> handler) {
    List<DynamicTest> tests = new ArrayList<>();
    for (Path file : files(topic)) {
      List<Case> cases;
      try {
        cases = parse(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Function<Case, String> h = handler.get();
      for (Case c : cases) {
        tests.add(
            DynamicTest.dynamicTest(
                c.file() + ":" + c.line() + " " + c.command(),
                () -> {
                  String actual = h.apply(c).strip();
                  assertThat(actual)
                      .as("%s:%d %s", c.file(), c.line(), c.command())
                      .isEqualTo(c.expected().strip());
                }));
      }
    }
    return tests.stream();
  }
}
