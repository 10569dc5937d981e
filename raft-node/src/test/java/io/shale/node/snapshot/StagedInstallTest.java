package io.shale.node.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The regression test for a fault the nemesis found (long run, 2026-12-01, run 24): Ratis asked for
 * the next install while the state machine was still being reloaded after the last one; the
 * reload's cleanup deleted {@code install-tmp} under the second fetch (DirectoryNotEmptyException),
 * the state machine failed and the node left the group for good. A swap must wait for a fetch in
 * progress, and swap in what it staged.
 */
class StagedInstallTest {
  @TempDir Path dir;

  @Test
  void aSwapWaitsForAFetchInProgressAndSwapsInWhatItStaged() throws Exception {
    Path engine = engineWith("old engine");
    StagedInstall staged = new StagedInstall(engine);

    CountDownLatch halfway = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CompletableFuture<String> fetch =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return staged.stage(
                    tmp -> {
                      Files.writeString(tmp.resolve("000007.sst"), "fetched table");
                      halfway.countDown();
                      awaitQuietly(finish); // the reload starts here, with the fetch half done
                      Files.writeString(tmp.resolve("MANIFEST-000008"), "fetched manifest");
                      return "fetched";
                    });
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    assertThat(halfway.await(10, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Boolean> swap =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return staged.swap();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(300);
    assertThat(swap).as("a swap while a fetch stages").isNotDone();

    finish.countDown();
    assertThat(fetch.get(10, TimeUnit.SECONDS)).isEqualTo("fetched");
    assertThat(swap.get(10, TimeUnit.SECONDS)).as("swapped the fetched checkpoint in").isTrue();
    assertThat(Files.readString(engine.resolve("000007.sst"))).isEqualTo("fetched table");
    assertThat(Files.readString(engine.resolve("MANIFEST-000008"))).isEqualTo("fetched manifest");
    assertThat(engine.resolve("000001.sst")).doesNotExist();
    assertThat(staged.isReady()).isFalse();
  }

  /** An engine directory holding one table, 000001.sst, with {@code content}. */
  private Path engineWith(String content) throws Exception {
    Path engine = dir.resolve("engine");
    Files.createDirectories(engine);
    Files.writeString(engine.resolve("000001.sst"), content);
    return engine;
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A crash after Ratis was told of an install (and purged its log up to it) but before the swap:
   * the staged checkpoint must be what the engine opens at restart, not dropped.
   */
  @Test
  void recoveryAtStartSwapsInAStagedCheckpointAndDeletesLeftovers() throws Exception {
    Path engine = engineWith("old engine");
    StagedInstall staged = new StagedInstall(engine);
    staged.stage(tmp -> Files.writeString(tmp.resolve("000007.sst"), "fetched table"));
    Files.createDirectories(dir.resolve("install-tmp"));
    Files.writeString(dir.resolve("install-tmp").resolve("000009.sst"), "half a fetch");

    new StagedInstall(engine).recover();

    assertThat(Files.readString(engine.resolve("000007.sst"))).isEqualTo("fetched table");
    assertThat(engine.resolve("000001.sst")).doesNotExist();
    assertThat(dir.resolve("install-ready")).doesNotExist();
    assertThat(dir.resolve("install-tmp")).doesNotExist();
    assertThat(dir.resolve("engine-old")).doesNotExist();
  }

  /** A crash between the swap's two renames: no engine, its old copy, and the staged one. */
  @Test
  void recoveryFinishesASwapACrashInterrupted() throws Exception {
    Path engine = dir.resolve("engine");
    StagedInstall staged = new StagedInstall(engine);
    staged.stage(tmp -> Files.writeString(tmp.resolve("000007.sst"), "fetched table"));
    Files.createDirectories(dir.resolve("engine-old"));
    Files.writeString(dir.resolve("engine-old").resolve("000001.sst"), "old engine");

    staged.recover();

    assertThat(Files.readString(engine.resolve("000007.sst"))).isEqualTo("fetched table");
    assertThat(dir.resolve("engine-old")).doesNotExist();
  }

  @Test
  void recoveryWithNothingStagedLeavesTheEngineAlone() throws Exception {
    Path engine = engineWith("the engine");
    new StagedInstall(engine).recover();
    assertThat(Files.readString(engine.resolve("000001.sst"))).isEqualTo("the engine");
  }
}
