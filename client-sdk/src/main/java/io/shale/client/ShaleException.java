package io.shale.client;

/** A request Shale did not carry out; subclasses say why in a way a caller can act on. */
public class ShaleException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ShaleException(String message, Throwable cause) {
    super(message, cause);
  }
}
