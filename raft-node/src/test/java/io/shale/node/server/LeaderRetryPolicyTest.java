package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.retry.MultipleLinearRandomRetry;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;

/**
 * How long a leader waits before trying a failing follower again, as Ratis reads the policy the
 * node sets: never more than {@code raft.follower_retry_max_wait} (with Ratis's random spread of up
 * to half again), however many attempts have failed.
 */
class LeaderRetryPolicyTest {

  /** The longest sleep Ratis's policy may choose after {@code failures} failed attempts. */
  private static long longestWaitMillis(String policy, int failures) {
    RetryPolicy p = MultipleLinearRandomRetry.parseCommaSeparated(policy);
    long longest = 0;
    for (int i = 0; i < 200; i++) { // the policy draws each sleep at random around its step
      RetryPolicy.Action a = p.handleAttemptFailure(() -> failures);
      assertThat(a.shouldRetry()).as("retries after %d failures", failures).isTrue();
      longest = Math.max(longest, a.getSleepTime().toLong(TimeUnit.MILLISECONDS));
    }
    return longest;
  }

  @Test
  void aFollowerBackFromALongAbsenceWaitsAtMostTheConfiguredStep() {
    String policy = ShaleNode.followerRetryPolicy(Duration.ofMillis(500));
    assertThat(longestWaitMillis(policy, 5)).isLessThanOrEqualTo(2);
    assertThat(longestWaitMillis(policy, 15)).isBetween(25L, 75L);
    for (int failures : new int[] {25, 40, 1_000, 1_000_000}) {
      assertThat(longestWaitMillis(policy, failures))
          .as("after %d", failures)
          .isBetween(250L, 750L);
    }
  }

  @Test
  void ratisDefaultWaitsFiveSecondsAfterThirtyFailuresWhichIsWhyTheNodeSetsItsOwn() {
    String ratisDefault = RaftServerConfigKeys.Log.Appender.RETRY_POLICY_DEFAULT;
    assertThat(longestWaitMillis(ratisDefault, 40)).isGreaterThan(2_500);
    RaftProperties p = ShaleNode.properties(NodeConfig.RaftSettings.defaults(), limits());
    assertThat(RaftServerConfigKeys.Log.Appender.retryPolicy(p))
        .isEqualTo(ShaleNode.followerRetryPolicy(Duration.ofMillis(500)));
  }

  private static NodeConfig.Limits limits() {
    return NodeConfig.Limits.defaults();
  }
}
