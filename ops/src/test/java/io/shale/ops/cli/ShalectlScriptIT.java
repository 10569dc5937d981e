package io.shale.ops.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.testing.ShaleCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code ops/bin/shalectl} as an operator runs it: a separate process started from the script
 * (after {@code package} has put the jars in ops/target/lib), against a real 3-node cluster.
 */
class ShalectlScriptIT {
  @RegisterExtension static final ShaleCluster cluster = ShaleCluster.builder().nodes(3).build();

  record Result(int code, String out) {}

  static Result shalectl(String... args) throws Exception {
    Path root = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();
    List<String> command = new ArrayList<>(List.of(root.resolve("ops/bin/shalectl").toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("SHALE_SKIP_BUILD", "1");
    pb.environment().put("SHALE_ENDPOINTS", String.join(",", cluster.endpoints()));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Result(p.exitValue(), out);
  }

  @Test
  void theScriptRunsWithoutAClasspathAndReportsByExitCode() throws Exception {
    Result put = shalectl("put", "script/k", "v1");
    assertThat(put).isEqualTo(new Result(0, "OK\n"));
    assertThat(shalectl("get", "script/k")).isEqualTo(new Result(0, "v1\n"));
    Result missing = shalectl("get", "script/none");
    assertThat(missing.code()).isEqualTo(3);
    Result status = shalectl("status");
    assertThat(status.code()).as(status.out()).isZero();
    assertThat(status.out().lines().filter(l -> l.contains("LEADER")).count()).isEqualTo(1);
    assertThat(status.out().lines().skip(1)).hasSize(3);
    Result cas = shalectl("cas", "script/k", "v2", "--expect", "wrong");
    assertThat(cas.code()).isEqualTo(4);
  }
}
