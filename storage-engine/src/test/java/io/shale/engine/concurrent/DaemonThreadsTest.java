package io.shale.engine.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
  @Test
  void namedThreadsAreDaemonsWithTheGivenName() {
    Thread t = DaemonThreads.named("flush").newThread(() -> {});
    assertThat(t.isDaemon()).isTrue();
    assertThat(t.getName()).isEqualTo("flush");
    assertThat(t.getState()).isEqualTo(Thread.State.NEW);
  }

  @Test
  void numberedThreadsCountFromOne() {
    ThreadFactory f = DaemonThreads.numbered("committer");
    assertThat(f.newThread(() -> {}).getName()).isEqualTo("committer-1");
    assertThat(f.newThread(() -> {}).getName()).isEqualTo("committer-2");
    assertThat(DaemonThreads.numbered("committer").newThread(() -> {}).getName())
        .isEqualTo("committer-1");
  }
}
