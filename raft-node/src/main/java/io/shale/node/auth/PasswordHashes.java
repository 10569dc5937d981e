package io.shale.node.auth;

import com.google.protobuf.ByteString;
import io.shale.node.auth.proto.PasswordHash;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Salted, slow password hashes: PBKDF2-HMAC-SHA512 from the JDK, 210,000 iterations (OWASP's figure
 * for this function), a 16-byte random salt, a 64-byte hash. The iteration count is stored with
 * each hash, so raising it later leaves existing hashes valid. Passwords are never stored or
 * logged, only these hashes.
 */
public final class PasswordHashes {
  static final int ITERATIONS = 210_000;

  /** The longest password accepted: longer input only costs the hash time. */
  public static final int MAX_PASSWORD_BYTES = 1024;

  private static final String ALGORITHM = "PBKDF2WithHmacSHA512";
  private static final int SALT_BYTES = 16;
  private static final int HASH_BITS = 512;
  private static final SecureRandom SALTS = new SecureRandom();

  /**
   * A hash no password matches in practice (of 32 random bytes), checked in place of a missing one
   * so that an unknown user costs the same time as a wrong password.
   */
  public static final PasswordHash DECOY = decoy();

  private PasswordHashes() {}

  private static PasswordHash decoy() {
    byte[] secret = new byte[32];
    SALTS.nextBytes(secret);
    return hash(java.util.HexFormat.of().formatHex(secret));
  }

  /** The hash of {@code password} under a new salt. */
  public static PasswordHash hash(String password) {
    check(password);
    byte[] salt = new byte[SALT_BYTES];
    SALTS.nextBytes(salt);
    return PasswordHash.newBuilder()
        .setSalt(ByteString.copyFrom(salt))
        .setHash(ByteString.copyFrom(derive(password, salt, ITERATIONS)))
        .setIterations(ITERATIONS)
        .build();
  }

  /** Whether {@code password} is the one {@code stored} was made from (in constant time). */
  public static boolean matches(String password, PasswordHash stored) {
    if (password.getBytes(StandardCharsets.UTF_8).length > MAX_PASSWORD_BYTES
        || stored.getIterations() < 1
        || stored.getSalt().isEmpty()) {
      return false;
    }
    byte[] candidate = derive(password, stored.getSalt().toByteArray(), stored.getIterations());
    return MessageDigest.isEqual(candidate, stored.getHash().toByteArray());
  }

  /** Throws naming the limit when {@code password} is empty or too long. */
  public static void check(String password) {
    int bytes = password.getBytes(StandardCharsets.UTF_8).length;
    if (bytes == 0 || bytes > MAX_PASSWORD_BYTES) {
      throw new IllegalArgumentException(
          "a password is 1 to " + MAX_PASSWORD_BYTES + " bytes, got " + bytes);
    }
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, HASH_BITS);
    try {
      return SecretKeyFactory.getInstance(ALGORITHM).generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no " + ALGORITHM, e);
    } finally {
      spec.clearPassword();
    }
  }
}
