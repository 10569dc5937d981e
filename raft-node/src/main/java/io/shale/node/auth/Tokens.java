package io.shale.node.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Bearer tokens: {@code base64url(user).expiry-ms.base64url(HMAC-SHA256(key, user "." expiry))},
 * signed with the replicated token key, so any node verifies what any node issued (etcd's JWT
 * tokens play the same part). A token names its user and expiry only; what the user may do is read
 * at each call, so a deleted user or a revoked role takes effect at once.
 */
public final class Tokens {
  private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODE = Base64.getUrlDecoder();

  /** The longest token accepted (a name of 64 characters makes one of about 150). */
  static final int MAX_TOKEN_CHARS = 1024;

  private Tokens() {}

  /** A token for {@code user}, valid until {@code expiresAtMs}. */
  public static String issue(byte[] key, String user, long expiresAtMs) {
    String body = ENCODE.encodeToString(user.getBytes(StandardCharsets.UTF_8)) + "." + expiresAtMs;
    return body + "." + ENCODE.encodeToString(mac(key, body));
  }

  /** The user {@code token} names when it is genuine and unexpired at {@code nowMs}, else null. */
  public static String verify(byte[] key, String token, long nowMs) {
    if (token.length() > MAX_TOKEN_CHARS) {
      return null;
    }
    int second = token.lastIndexOf('.');
    int first = second <= 0 ? -1 : token.lastIndexOf('.', second - 1);
    if (first <= 0) {
      return null;
    }
    String body = token.substring(0, second);
    try {
      byte[] signature = DECODE.decode(token.substring(second + 1));
      if (!MessageDigest.isEqual(signature, mac(key, body))) {
        return null;
      }
      long expires = Long.parseLong(token.substring(first + 1, second));
      if (nowMs >= expires) {
        return null;
      }
      return new String(DECODE.decode(token.substring(0, first)), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException malformed) {
      return null;
    }
  }

  private static byte[] mac(byte[] key, String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(body.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no HmacSHA256", e);
    }
  }
}
