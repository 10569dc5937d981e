package io.shale.client;

/**
 * A request the server refused as malformed (empty or reserved key, malformed range, an empty
 * batch); the message names what is wrong. Never retried: the same request would fail again.
 */
public class InvalidRequestException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public InvalidRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
