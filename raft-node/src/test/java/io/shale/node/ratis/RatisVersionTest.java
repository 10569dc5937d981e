package io.shale.node.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;

/**
 * A tripwire: the workarounds in this package were written against one Ratis release. When the
 * build moves to another, this fails, and each workaround's test must be looked at again (does the
 * behaviour still exist? is the workaround still right?) before the expected version moves.
 */
class RatisVersionTest {
  private static final String WORKAROUNDS_CHECKED_AGAINST = "3.3.0";

  @Test
  void theWorkaroundsWereCheckedAgainstThisRatisVersion() {
    String actual = RaftServer.class.getPackage().getImplementationVersion();
    assertThat(actual)
        .as(
            "Ratis is now %s: re-examine every class in io.shale.node.ratis (and the"
                + " state machine's queryStale, pause and reinitialize) with its test, then update"
                + " WORKAROUNDS_CHECKED_AGAINST",
            actual)
        .isEqualTo(WORKAROUNDS_CHECKED_AGAINST);
  }
}
