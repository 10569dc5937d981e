package io.shale.node.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Tokens name their user until they expire, and only under the key that signed them. */
class TokensTest {
  private static final byte[] KEY = new byte[32];
  private static final byte[] OTHER = new byte[32];

  static {
    Arrays.fill(KEY, (byte) 7);
    Arrays.fill(OTHER, (byte) 8);
  }

  @Test
  void aTokenNamesItsUserUntilItExpiresAndOnlyUnderItsKey() {
    String t = Tokens.issue(KEY, "alice.ops@example", 10_000);
    assertThat(Tokens.verify(KEY, t, 9_999)).isEqualTo("alice.ops@example");
    assertThat(Tokens.verify(KEY, t, 10_000)).as("expired").isNull();
    assertThat(Tokens.verify(OTHER, t, 0)).as("another cluster's key").isNull();
  }

  @Test
  void aChangedTokenIsRefused() {
    String t = Tokens.issue(KEY, "bob", 10_000);
    String[] parts = t.split("\\.");
    String longer = parts[0] + "." + 99_999 + "." + parts[2];
    String renamed =
        Tokens.issue(KEY, "root", 10_000).split("\\.")[0] + "." + parts[1] + "." + parts[2];
    assertThat(Tokens.verify(KEY, longer, 0)).as("a later expiry").isNull();
    assertThat(Tokens.verify(KEY, renamed, 0)).as("another user").isNull();
    for (String bad : new String[] {"", ".", "..", "a.b.c", t + "x", "x".repeat(5000)}) {
      assertThat(Tokens.verify(KEY, bad, 0)).as(bad).isNull();
    }
  }
}
