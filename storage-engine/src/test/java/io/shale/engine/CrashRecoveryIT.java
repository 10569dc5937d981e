package io.shale.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM that writes, flushes and compacts with SIGKILL at random moments, then checks
 * that the reopened directory holds exactly the batches up to its persisted index: nothing lost
 * that was acknowledged as durable, nothing half-written, and the durable index never goes back.
 */
class CrashRecoveryIT {
  private static final int KILLS = 60;
  private static final long SEED = 42;

  @TempDir Path tmp;

  @Test
  void everyKillLeavesAnOpenableDirectoryMatchingThePersistedIndex() throws Exception {
    Path dir = tmp.resolve("db");
    Random rnd = new Random(7);
    TreeMap<String, byte[]> model = new TreeMap<>();
    long modelIndex = -1;
    long lastPersisted = -1;
    List<Long> persistedAfterKill = new ArrayList<>();
    for (int kill = 0; kill < KILLS; kill++) {
      Process child =
          new ProcessBuilder(
                  javaBinary(),
                  "-Xmx256m",
                  "--enable-native-access=ALL-UNNAMED",
                  "--sun-misc-unsafe-memory-access=allow",
                  "--add-opens=java.base/java.io=ALL-UNNAMED",
                  "-cp",
                  System.getProperty("java.class.path"),
                  CrashWorkload.class.getName(),
                  dir.toString(),
                  Long.toString(SEED))
              .redirectErrorStream(true)
              .start();
      BufferedReader out =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String first = out.readLine();
      assertThat(first).as("child output before kill %d", kill).startsWith("started at");
      Thread.sleep(20 + rnd.nextInt(700));
      assertThat(child.isAlive()).as("child still running at kill %d", kill).isTrue();
      child.destroyForcibly(); // SIGKILL on Linux
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

      try (Engine engine = Engine.open(dir, TestOptions.tiny())) {
        long persisted = engine.persistedAppliedIndex();
        assertThat(persisted)
            .as("durable index after kill %d", kill)
            .isGreaterThanOrEqualTo(lastPersisted);
        for (long i = modelIndex + 1; i <= persisted; i++) {
          for (Map.Entry<String, byte[]> e : CrashWorkload.batch(SEED, i).entrySet()) {
            if (e.getValue() == null) {
              model.remove(e.getKey());
            } else {
              model.put(e.getKey(), e.getValue());
            }
          }
        }
        modelIndex = persisted;
        lastPersisted = persisted;
        persistedAfterKill.add(persisted);
        assertThat(ModelBasedEngineTest.contents(engine))
            .as("contents after kill %d at index %d", kill, persisted)
            .isEqualTo(render(model));
      }
      assertThat(Verifier.verify(dir).problems()).as("verify after kill %d", kill).isEmpty();
    }
    System.out.println("persisted index after each of " + KILLS + " kills: " + persistedAfterKill);
    // The kills must have landed while work was being made durable, not only at startup.
    assertThat(persistedAfterKill.get(KILLS - 1)).isGreaterThan(1000);
    assertThat(persistedAfterKill.stream().distinct().count()).isGreaterThan(KILLS / 2);
    assertThat(Files.list(dir).filter(p -> p.toString().endsWith(".tmp")).count()).isZero();
    // Blob GC ran in the children too, so some kills may have landed inside one.
    long gcEvents = 0;
    for (String log : List.of("events.jsonl", "events.jsonl.1")) {
      Path p = dir.resolve(log);
      if (Files.exists(p)) {
        gcEvents +=
            Files.readAllLines(p).stream().filter(l -> l.contains("\"event\":\"blob_gc\"")).count();
      }
    }
    System.out.println("blob GC runs logged by the children: " + gcEvents);
    assertThat(gcEvents).isPositive();
  }

  private static List<String> render(TreeMap<String, byte[]> model) {
    List<String> out = new ArrayList<>();
    model.forEach((k, v) -> out.add(k + "=" + java.util.Arrays.hashCode(v) + "/" + v.length));
    return out;
  }

  private static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
