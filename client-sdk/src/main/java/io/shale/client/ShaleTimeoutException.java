package io.shale.client;

/**
 * A request that did not complete within its deadline. A write may or may not have been applied;
 * retrying it through the same client call (same request id) applies it at most once.
 */
public final class ShaleTimeoutException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public ShaleTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
