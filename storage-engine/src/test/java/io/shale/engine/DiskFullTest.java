package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real full disk: the engine runs on a 2 MiB tmpfs until a flush hits ENOSPC. Writes must then
 * fail with a clear error, and after the disk grows everything up to the persisted index must be
 * there, intact. Needs permission to mount tmpfs (root, as in CI); skipped with a reason otherwise.
 */
class DiskFullTest {
  @TempDir Path tmp;
  private Path mount;

  private static boolean run(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  @AfterEach
  void unmount() throws Exception {
    if (mount != null) {
      run("umount", mount.toString());
    }
  }

  @Test
  void fullDiskFailsWritesClearlyAndLosesNothingPersisted() throws Exception {
    Path m = tmp.resolve("small-disk");
    Files.createDirectories(m);
    boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", m.toString());
    assumeTrue(mounted, "cannot mount a tmpfs here (needs root): the full-disk test did not run");
    mount = m;
    Path dir = m.resolve("db");
    TreeMap<String, byte[]> written = new TreeMap<>();
    Random rnd = new Random(5);
    long persisted;
    RuntimeException failure = null;
    Engine e = Engine.open(dir, TestOptions.tiny());
    long index = 0;
    try {
      for (; index < 100_000 && failure == null; index++) {
        byte[] v = new byte[500];
        rnd.nextBytes(v);
        String key = String.format("key-%06d", index);
        try {
          e.apply(new WriteBatch().put(key.getBytes(StandardCharsets.UTF_8), v), index);
          written.put(key, v);
        } catch (RuntimeException ex) {
          failure = ex;
        }
      }
    } finally {
      try {
        e.close();
      } catch (IOException ignored) {
        // closing an engine whose disk is full may fail its final flush; that is the point
      }
    }
    // Read after close: a flush already under way when the failure surfaced may still land.
    persisted = e.persistedAppliedIndex();
    assertThat(failure).as("writes must fail once the disk is full").isNotNull();
    assertThat(failure)
        .isInstanceOf(EngineException.class)
        .hasMessageContaining("accepts no writes")
        .hasStackTraceContaining("No space left on device");
    assertThat(persisted).isPositive();

    assertThat(run("mount", "-o", "remount,size=64m", m.toString())).isTrue();
    try (Engine reopened = Engine.open(dir, TestOptions.tiny())) {
      assertThat(reopened.persistedAppliedIndex()).isEqualTo(persisted);
      for (long i = 0; i <= persisted; i++) {
        String key = String.format("key-%06d", i);
        assertThat(reopened.get(key.getBytes(StandardCharsets.UTF_8)))
            .as(key)
            .isEqualTo(written.get(key));
      }
      // Nothing past the persisted index is visible: the engine has no log of its own.
      assertThat(
              reopened.get(
                  String.format("key-%06d", persisted + 1).getBytes(StandardCharsets.UTF_8)))
          .isNull();
      reopened.apply(
          new WriteBatch().put("after".getBytes(StandardCharsets.UTF_8), new byte[10]),
          persisted + 1);
      assertThat(reopened.flush()).isEqualTo(persisted + 1);
    }
    assertThat(Verifier.verify(dir).problems()).isEmpty();
  }
}
