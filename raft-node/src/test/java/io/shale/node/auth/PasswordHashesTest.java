package io.shale.node.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.node.auth.proto.PasswordHash;
import org.junit.jupiter.api.Test;

/** Salted slow hashes: a password matches its own hash only; the decoy matches nothing given. */
class PasswordHashesTest {
  @Test
  void aPasswordMatchesItsHashAndNothingElseDoes() {
    PasswordHash h = PasswordHashes.hash("correct horse");
    assertThat(PasswordHashes.matches("correct horse", h)).isTrue();
    assertThat(PasswordHashes.matches("correct horsf", h)).isFalse();
    assertThat(h.getIterations()).isEqualTo(PasswordHashes.ITERATIONS);
    // A new salt each time: the same password hashes differently.
    assertThat(PasswordHashes.hash("correct horse").getHash()).isNotEqualTo(h.getHash());
    for (String guess : new String[] {"", "root", "admin", "correct horse"}) {
      assertThat(PasswordHashes.matches(guess, PasswordHashes.DECOY)).as(guess).isFalse();
    }
  }

  @Test
  void passwordsAreBounded() {
    assertThatThrownBy(() -> PasswordHashes.hash(""))
        .hasMessageContaining("a password is 1 to 1024 bytes, got 0");
    assertThatThrownBy(() -> PasswordHashes.hash("x".repeat(1025)))
        .hasMessageContaining("got 1025");
    assertThat(PasswordHashes.matches("x".repeat(1025), PasswordHashes.hash("x"))).isFalse();
  }
}
