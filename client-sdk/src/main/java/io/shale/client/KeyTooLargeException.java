package io.shale.client;

/**
 * A key longer than the server's {@code limits.max_key_size} (64 KiB by default); the message gives
 * the key's size and the limit. Never retried.
 */
public final class KeyTooLargeException extends InvalidRequestException {
  private static final long serialVersionUID = 1L;

  public KeyTooLargeException(String message, Throwable cause) {
    super(message, cause);
  }
}
