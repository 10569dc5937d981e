package io.shale.client;

/**
 * A request Shale did not carry out. Subclasses say why in a way a caller can act on; this class
 * itself is a failure with no better name (every endpoint unreachable, an internal error), and its
 * message says what the last attempt got.
 */
public class ShaleException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ShaleException(String message, Throwable cause) {
    super(message, cause);
  }
}
