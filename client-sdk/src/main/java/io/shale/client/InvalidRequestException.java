package io.shale.client;

/**
 * A request the server refused as malformed (empty or reserved key, key or value over the
 * server's limit, malformed range); the message names what is wrong. Never retried.
 */
public final class InvalidRequestException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public InvalidRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
