package io.shale.ops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The alert rules as Prometheus reads them: {@code promtool check rules} accepts them, and {@code
 * promtool test rules} runs their unit tests ({@code ops/prometheus/alerts_test.yml}: every alert
 * fires on a sick node's synthetic series, not before its {@code for}, and never on a healthy
 * node's). Needs promtool (Debian's {@code prometheus} package, which .ci/run installs); skipped
 * without it, failed instead when SHALE_REQUIRE_PROMTOOL=1.
 */
class AlertRulesTest {
  private static final Path RULES = Path.of("prometheus", "alerts.yml");
  private static final Path TESTS = Path.of("prometheus", "alerts_test.yml");

  @BeforeAll
  static void promtoolIsThere() throws Exception {
    boolean found;
    try {
      found = run("promtool", "--version").exit() == 0;
    } catch (IOException notInstalled) {
      found = false;
    }
    if (!found && "1".equals(System.getenv("SHALE_REQUIRE_PROMTOOL"))) {
      throw new AssertionError("promtool is not installed (SHALE_REQUIRE_PROMTOOL=1)");
    }
    Assumptions.assumeTrue(found, "promtool is not installed (apt-get install prometheus)");
  }

  record Result(int exit, String output) {}

  private static Result run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not end within 60 s");
    }
    return new Result(p.exitValue(), out);
  }

  @Test
  void promtoolAcceptsTheRules() throws Exception {
    Result r = run("promtool", "check", "rules", RULES.toString());
    assertThat(r.exit()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS: 5 rules found");
  }

  @Test
  void everyAlertHasUnitTestsAndThemPass() throws Exception {
    String rules = Files.readString(RULES);
    String tests = Files.readString(TESTS);
    for (String alert :
        List.of(
            "ShaleNoLeader",
            "ShaleFrequentLeaderChanges",
            "ShaleWriteThrottlingSustained",
            "ShaleL0NearStopTrigger",
            "ShaleSlowFsync")) {
      assertThat(rules).contains("alert: " + alert);
      assertThat(tests).as("alerts_test.yml tests %s", alert).contains("alertname: " + alert);
    }
    Result r = run("promtool", "test", "rules", TESTS.toString());
    assertThat(r.exit()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS");
  }

  /** A broken expectation fails: the run above is a real check, not one that always passes. */
  @Test
  void aWrongExpectationFails() throws Exception {
    Path dir = Files.createTempDirectory("alerts");
    Files.copy(RULES, dir.resolve("alerts.yml"));
    Files.writeString(
        dir.resolve("alerts_test.yml"),
        Files.readString(TESTS).replace("severity: critical", "severity: info"));
    Result r = run("promtool", "test", "rules", dir.resolve("alerts_test.yml").toString());
    assertThat(r.exit()).isNotZero();
    assertThat(r.output()).contains("FAILED").contains("ShaleNoLeader");
  }
}
