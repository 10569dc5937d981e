package io.shale.client;

/**
 * A value longer than the server's {@code limits.max_value_size} (16 MiB by default); the message
 * gives the value's size and the limit. Never retried: split the value, or raise the limit on every
 * node.
 */
public final class ValueTooLargeException extends InvalidRequestException {
  private static final long serialVersionUID = 1L;

  public ValueTooLargeException(String message, Throwable cause) {
    super(message, cause);
  }
}
